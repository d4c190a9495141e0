from loomsync.ids import ThreadId


async def test_put_then_get(client, auth, new_user):
    headers = auth(new_user("alice"), org="acme")
    tid = ThreadId.new()
    doc = {"id": tid, "conversation": {"messages": [{"role": "user", "content": "hi\u0000"}]}}
    r = await client.put(f"/api/threads/{tid}", json=doc, headers=headers)
    assert r.status_code == 201, r.text
    r = await client.get(f"/api/threads/{tid}", headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["conversation"]["messages"][0]["content"] == "hi\u0000"
