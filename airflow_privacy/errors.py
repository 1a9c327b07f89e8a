"""Exceptions shared by every layer.

``InputError`` is raised for anything the *user* got wrong (a missing column, an empty
table, a parameter out of range). The CLI turns it into a one-line message on stderr and
exit code 2; operators turn it into a task failure with the same message.
"""


class InputError(ValueError):
    """Bad input: the message names the column, value or parameter at fault."""
