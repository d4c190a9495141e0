"""``loomsync share ID`` with no option shows how the thread is shared (issue 30 item 8: it
was a usage error): its visibility and support, then its share links as ``--links`` lists
them; offline, not logged in, or a private session, the visibility alone and a note saying
why no link is listed. Against the real server over HTTP, the CLI as a subprocess.
"""

from __future__ import annotations

from tests.client.conftest import LiveServer, Person, login, new_thread


def test_share_alone_shows_the_visibility_and_the_links(
    person: Person, own_server: LiveServer, account: str
) -> None:
    assert login(person, own_server, account).code == 0
    thread_id = str(person.agent().save(new_thread(1, visibility="organization")).id)
    assert person("sync").code == 0
    made = person("share", thread_id, "--link")
    assert made.code == 0, made.err
    link_id = made.err.split("--revoke ")[1].strip()

    shown = person("share", thread_id)
    assert shown.code == 0, shown.err
    first, header, row = shown.out.splitlines()
    assert first == (
        f"{thread_id}: visible to your organization (organization), not shared with support."
    )
    assert header.split("\t")[:2] == ["ID", "STATE"]
    assert row.split("\t")[:2] == [link_id, "live"]
    assert shown.err == f"1 share link(s) of {thread_id}, 1 live:\n"

    own_server.stop()
    offline = person("share", thread_id[:12])  # a short id too
    assert offline.code == 0, offline.err
    assert offline.out.splitlines() == [first]
    assert "Share links not listed: cannot reach" in offline.err


def test_share_alone_without_a_login_or_of_a_private_session_says_why_no_link(
    person: Person,
) -> None:
    plain = str(person.agent().save(new_thread(1)).id)
    shown = person("share", plain)
    assert shown.code == 0, shown.err
    assert shown.out == f"{plain}: visible to only you (private), not shared with support.\n"
    assert shown.err == "Share links are kept on the server: log in to list them.\n"
    private = str(person.agent().save(new_thread(1, is_private=True)).id)
    secret = person("share", private)
    assert secret.code == 0, secret.err
    assert "never leaves this machine" in secret.err
