"""Records with fields changed, for tests that need one field different."""

import copy


def changed(record: dict, **changes) -> dict:
    """A deep copy of ``record`` with fields set: ``qos__async=True`` sets record["qos"]["async"]."""
    r = copy.deepcopy(record)
    for dotted, value in changes.items():
        where = r
        *parents, last = dotted.split("__")
        for p in parents:
            where = where[p]
        where[last] = value
    return r
