"""A save finds what changed since the last save, whatever the caller did to its message list in
between (issue 15 item 1): the fast path's identity check is done once per save, never carried
over to the next one."""

from __future__ import annotations

from pathlib import Path

from loomsync.core.document.model import Message, Thread
from loomsync.store.local import LocalThreadStore


def _thread(count: int) -> Thread:
    return Thread(
        conversation={"messages": [{"role": "user", "content": f"m{n}"} for n in range(count)]}
    )


def test_a_message_replaced_between_two_saves_of_the_same_length_is_saved(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(_thread(5))
    thread = store.save(thread)  # nothing new: the store has checked this very list
    thread.conversation.messages[2] = Message(role="user", content="replaced")
    store.save(thread)
    again = LocalThreadStore(tmp_path).load(str(thread.id))
    assert [m.content for m in again.messages] == ["m0", "m1", "replaced", "m3", "m4"]


def test_prepare_then_a_change_then_save_sees_the_change(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(_thread(3))
    store.prepare(thread)  # checks the list and remembers it continues the file
    thread.conversation.messages[0] = Message(role="user", content="first, replaced")
    store.save(thread)  # same list, same length: only a fresh check sees the replacement
    again = LocalThreadStore(tmp_path).load(str(thread.id))
    assert [m.content for m in again.messages] == ["first, replaced", "m1", "m2"]


def test_appends_to_the_same_list_keep_every_turn(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(_thread(1))
    for n in range(20):
        thread.conversation.messages.append(Message(role="assistant", content=f"turn {n}"))
        thread = store.save(thread)
    again = LocalThreadStore(tmp_path).load(str(thread.id))
    assert [m.content for m in again.messages] == ["m0", *(f"turn {n}" for n in range(20))]
