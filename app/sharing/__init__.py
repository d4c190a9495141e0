"""Share links (API.md section 1, issue 13 item 1): revocable, optionally expiring URLs that let
anyone holding one read one thread, in a browser or as JSON."""
