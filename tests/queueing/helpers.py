from queueing.ranking import Customer


def person(uid, **fields) -> dict:
    """A valid request person; fields override the defaults."""
    return {
        "uid": uid,
        "already_wait_time": 0,
        "is_online": 0,
        "is_complaint": 0,
        "confirm_num": 0,
        "not_confirm_num": 0,
        **fields,
    }


def customer(p: dict) -> Customer:
    """A request person (valid) as the ranking's input."""
    return Customer(
        uid=str(p["uid"]),
        already_wait_time=p["already_wait_time"],
        is_online=p["is_online"],
        is_complaint=p["is_complaint"],
        confirm_num=p["confirm_num"],
        not_confirm_num=p["not_confirm_num"],
        is_ssvip=bool(p.get("is_ssvip", 0)),
        be_jump=p.get("be_jump", 0),
        payload=p,
    )
