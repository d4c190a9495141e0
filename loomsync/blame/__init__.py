"""From code to conversation on the client (issue 32 item 3): ``loomsync blame`` and
``loomsync why``. :mod:`.gitblame` reads git (blame, trailers), :mod:`.local` answers from
this machine's threads, :mod:`.online` asks the server, :mod:`.answer` merges them."""
