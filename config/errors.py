"""Domain errors that services raise; the API's exception handler turns them into the one
error shape (400 invalid_argument naming the field, 403, 409 conflict)."""


class InvalidArgument(Exception):
    """Input that only a service can judge (e.g. a referenced row that does not exist)."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class Forbidden(Exception):
    """The caller may see the resource but not take this action on it."""


class ConflictError(Exception):
    """The resource's current state does not allow the action; nothing was changed.

    `extra`: what the answer says beside the detail, e.g. the open children that stop a
    parent's completion (`{"open_children": [...]}`)."""

    extra: dict = {}
