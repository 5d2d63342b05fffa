"""The errors hulk raises on purpose, one hierarchy under :class:`HulkError`.

Each class also derives from the built-in exception that callers caught before it existed,
so ``except ValueError`` around a hulk call keeps working::

    HulkError
    ├── InputError (ValueError)            an argument or a value is not usable
    │   ├── InputTypeError (TypeError)     ... because of its type
    │   └── FileFormatError                a file's content: names the file, the field, the value
    ├── DeviceError (RuntimeError)         device='cuda' where no GPU is usable
    ├── NotFittedError (RuntimeError)      a model used before it was trained or loaded
    └── OutOfMemoryError (MemoryError)     an allocation failed: names what was being built

The C++ core's ``std::invalid_argument`` arrives as :class:`InputError` and ``std::bad_alloc``
as :class:`OutOfMemoryError` (translated in ``python/module.cpp``).
"""

from __future__ import annotations

__all__ = ["HulkError", "InputError", "InputTypeError", "FileFormatError", "DeviceError",
           "NotFittedError", "OutOfMemoryError"]


class HulkError(Exception):
    """Base of every error hulk raises on purpose."""


class InputError(HulkError, ValueError):
    """An argument, a field or a value that hulk cannot use; the message names it and its value."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (also a TypeError, as before 0.2)."""


class FileFormatError(InputError):
    """A file whose content is wrong. ``path`` and ``field`` say where (``field`` may be None
    when the whole file is unreadable)."""

    def __init__(self, path, field: str | None, message: str):
        self.path, self.field = str(path), field
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(where + message)


class DeviceError(HulkError, RuntimeError):
    """A device was asked for that this machine or this build cannot give."""


class NotFittedError(HulkError, RuntimeError):
    """A model was used before it was trained or loaded."""


class OutOfMemoryError(HulkError, MemoryError):
    """Memory ran out; the message names what was being allocated and how large it was."""
