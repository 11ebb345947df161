"""The exceptions tessera raises: one class per kind of library error.

Every class derives from :class:`tessera.Error` and from the built-in exception a Python caller
would expect for that kind, so ``except ValueError`` and ``except tessera.Error`` both work. The
message is the library's own: it names the key or file, the byte range, the option and the value.

=============================  =====================  ==================================================
class                          also a                 raised for
=============================  =====================  ==================================================
InvalidArgumentError           ValueError             malformed arguments: a bad shape, option, step 0
OutOfRangeError                IndexError             an index or slice bound outside the array
NotFoundError                  FileNotFoundError      a file, key or dataset that does not exist
CorruptDataError               (Error only)           stored bytes that fail to decode or verify
IoError                        OSError                the operating system or store refused an operation
UnsupportedError               NotImplementedError    valid input tessera does not implement
OutOfResourcesError            MemoryError            memory or another bounded resource exhausted
FailedPreconditionError        RuntimeError           an object in the wrong state (a closed stream)
AlreadyExistsError             FileExistsError        creating where something exists (mode ``w-``)
=============================  =====================  ==================================================

NotFoundError is a FileNotFoundError (hence an OSError) because opening a path that does not
exist is by far its most common cause; a missing HDF5 dataset raises it too.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "InvalidArgumentError",
    "OutOfRangeError",
    "NotFoundError",
    "CorruptDataError",
    "IoError",
    "UnsupportedError",
    "OutOfResourcesError",
    "FailedPreconditionError",
    "AlreadyExistsError",
]


class Error(Exception):
    """Base class of every error the tessera library reports."""


class InvalidArgumentError(Error, ValueError):
    """The caller asked for something malformed (a bad slice, shape or option)."""


class OutOfRangeError(Error, IndexError):
    """An index or slice bound outside the array."""


class NotFoundError(Error, FileNotFoundError):
    """A file, key or dataset that does not exist."""


class CorruptDataError(Error):
    """Stored bytes that fail to decode or verify; the message names the key and byte range."""


class IoError(Error, OSError):
    """The operating system or the store refused an operation."""


class UnsupportedError(Error, NotImplementedError):
    """Valid input that tessera does not implement (a codec, dtype, option or format feature)."""


class OutOfResourcesError(Error, MemoryError):
    """Memory or another bounded resource exhausted."""


class FailedPreconditionError(Error, RuntimeError):
    """The object is in the wrong state for the call (a closed stream or array)."""


class AlreadyExistsError(Error, FileExistsError):
    """Creating where an array, group or file already exists (mode ``w-``); the message names what
    is there. Pass ``mode="w"`` to replace it."""
