"""``loomsync watch`` as a background service (issue 17 item 2): a systemd user unit on
Linux (:mod:`.systemd`), a launchd agent on macOS (:mod:`.launchd`), chosen by :mod:`.detect`;
what they share is :mod:`.base`. The command is :mod:`loomsync.cli.service`."""
