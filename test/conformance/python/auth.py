"""auth_check(): the SDK's own call to GET /api/public/projects, parsed by its own model."""

from common import client, done

lf = client()
ok = lf.auth_check()
lf.shutdown()
done({"ok": bool(ok)})
