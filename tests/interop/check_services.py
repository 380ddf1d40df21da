"""Checks the service definitions: launchd/dev.moss.mossd.plist and systemd/moss.service.

Run by ../check-services.sh (`python3 tests/interop/check_services.py REPO_ROOT [MOSS_BIN]`).

Both files are templates that `moss service install` fills in: `@MOSSD@` (the absolute mossd
path), `@ADDR@` and `@MOSS_HOME@`. They must carry exactly those placeholders. Each file is
checked as a rendered copy: placeholders are filled with paths under a throwaway home whose
`.cargo/bin/mossd` is an executable stand-in, the way the installer fills them (other spellings,
`{{name}}`, `${NAME}`, `HOME_DIR`, are recognised too, so a stray one is caught). With MOSS_BIN,
the files `MOSS_BIN service install --dry-run` prints for both managers are checked the same way.

plist (plistlib): Label `dev.moss.mossd` matching the file name; ProgramArguments an absolute
path to `mossd` and, if `--addr` is given, a loopback address; RunAtLoad true; KeepAlive true or
a dict of launchd's KeepAlive conditions; every path key absolute.
unit: [Unit]/[Service]/[Install] present; ExecStart runs `mossd` by absolute path (or `%h/`);
Restart set; WantedBy=default.target (the user manager's target); hardened (NoNewPrivileges=yes,
ProtectSystem=strict with the Moss home in ReadWritePaths, PrivateTmp=yes, Restart=on-failure);
then
`systemd-analyze verify --user` on the rendered copy, where any diagnostic fails (it exits 0 on
unknown keys and bad values, so its output is what counts). Skipped, and said so, when
systemd-analyze is missing or cannot start a user manager here.

Each checker is also run on broken variants of the real files, which it must reject, so a
checker that accepts anything fails too. Ends with `services: N passed, N failed[, N skipped]`.
"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PLIST = Path("launchd/dev.moss.mossd.plist")
UNIT = Path("systemd/moss.service")
LABEL = "dev.moss.mossd"

# launchd's documented KeepAlive conditions (launchd.plist(5)).
KEEPALIVE_KEYS = {
    "SuccessfulExit",
    "NetworkState",
    "PathState",
    "OtherJobEnabled",
    "Crashed",
    "AfterInitialExit",
}
# What `moss service install` fills in (moss-cli/src/service.rs); nothing else may be left.
CLI_PLACEHOLDERS = ["@MOSSD@", "@ADDR@", "@MOSS_HOME@"]
PLIST_PATH_KEYS = ("StandardErrorPath", "StandardOutPath", "WorkingDirectory", "RootDirectory")
LOOPBACK_ADDR = re.compile(r"^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):\d{1,5}$")

# Placeholder spellings an installer may use: @NAME@, {{ name }}, ${NAME}, __NAME__, and bare
# upper-case words ending in _DIR, _PATH or _BIN (HOME_DIR today). systemd's own %-specifiers
# (%h, %u, ...) are not placeholders: systemd expands them itself.
PLACEHOLDER = re.compile(
    r"@(?P<at>[A-Za-z][A-Za-z0-9_]*)@"
    r"|\{\{\s*(?P<braces>[A-Za-z_][A-Za-z0-9_]*)\s*\}\}"
    r"|\$\{(?P<dollar>[A-Za-z_][A-Za-z0-9_]*)\}"
    r"|__(?P<dunder>[A-Z][A-Z0-9_]*[A-Z0-9])__"
    r"|\b(?P<bare>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:DIR|PATH|BIN))\b"
)


@dataclass
class Sandbox:
    """A throwaway home for rendering: `home/.cargo/bin/mossd` is an executable stand-in."""

    root: Path
    home: Path = field(init=False)
    mossd: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.mossd = self.home / ".cargo" / "bin" / "mossd"
        self.mossd.parent.mkdir(parents=True)
        (self.home / ".moss").mkdir(mode=0o700)
        self.mossd.write_text("#!/bin/sh\nexit 0\n")
        self.mossd.chmod(self.mossd.stat().st_mode | stat.S_IXUSR)

    def value_for(self, name: str) -> str:
        """What an installer would put for placeholder `name`."""
        n = name.upper()
        if "MOSSD" in n or n.endswith("_BIN") or "EXEC" in n or "PROGRAM" in n:
            return str(self.mossd)
        if "LOG" in n:
            return str(self.home / ".moss" / "mossd.log")
        if "MOSS_HOME" in n or "DATA" in n:
            return str(self.home / ".moss")
        if "HOME" in n:
            return str(self.home)
        if "ADDR" in n:
            return "127.0.0.1:6677"
        if "PORT" in n:
            return "6677"
        if "USER" in n:
            return os.environ.get("USER", "moss")
        return str(self.home / name.lower())


def render(text: str, sandbox: Sandbox) -> tuple[str, list[str]]:
    """`text` with its placeholders filled in, and the placeholders found (in order, unique)."""
    found: list[str] = []

    def fill(m: re.Match[str]) -> str:
        name = next(v for v in m.groupdict().values() if v)
        if m.group(0) not in found:
            found.append(m.group(0))
        return sandbox.value_for(name)

    return PLACEHOLDER.sub(fill, text), found


# --- plist ------------------------------------------------------------------------------------


def plist_problems(text: str, file_name: str) -> list[str]:
    """What is wrong with a rendered LaunchAgent plist; empty when it is fine."""
    try:
        doc = plistlib.loads(text.encode("utf-8"), fmt=plistlib.FMT_XML)
    except Exception as e:  # plistlib raises several types for malformed input
        return [f"not a valid XML plist: {e}"]
    if not isinstance(doc, dict):
        return [f"top level is {type(doc).__name__}, not a dict"]
    problems = []

    label = doc.get("Label")
    if label != LABEL:
        problems.append(f"Label is {label!r}, expected {LABEL!r}")
    if file_name != f"{LABEL}.plist":
        problems.append(f"file name {file_name!r} does not match the Label ({LABEL}.plist)")

    args = doc.get("ProgramArguments")
    if not (isinstance(args, list) and args and all(isinstance(a, str) for a in args)):
        problems.append(f"ProgramArguments must be a non-empty array of strings, is {args!r}")
    else:
        if not (args[0].startswith("/") and Path(args[0]).name == "mossd"):
            problems.append(f"ProgramArguments[0] must be an absolute path to mossd: {args[0]!r}")
        if "--addr" in args:
            i = args.index("--addr")
            addr = args[i + 1] if i + 1 < len(args) else None
            if addr is None or not LOOPBACK_ADDR.match(addr):
                problems.append(f"--addr must be a loopback host:port, is {addr!r}")
    if "Program" in doc and doc["Program"] != (args or [None])[0]:
        problems.append(f"Program {doc['Program']!r} differs from ProgramArguments[0]")

    if doc.get("RunAtLoad") is not True:
        problems.append(f"RunAtLoad must be true, is {doc.get('RunAtLoad')!r}")

    keep = doc.get("KeepAlive")
    if isinstance(keep, dict):
        unknown = sorted(set(keep) - KEEPALIVE_KEYS)
        if not keep or unknown:
            problems.append(
                f"KeepAlive dict must hold launchd conditions {sorted(KEEPALIVE_KEYS)}; "
                f"has {sorted(keep)}"
            )
    elif keep is not True:
        problems.append(f"KeepAlive must be true or a dict of conditions, is {keep!r}")

    for key in PLIST_PATH_KEYS:
        value = doc.get(key)
        if value is not None and not (isinstance(value, str) and value.startswith("/")):
            problems.append(f"{key} must be an absolute path, is {value!r}")
    return problems


# --- systemd unit -----------------------------------------------------------------------------


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A unit file as {section: {key: [values]}}: comments dropped, `\\` continuations joined,
    repeated keys kept in order (systemd allows them, e.g. Environment=)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif "=" in line and current is not None:
            key, value = line.split("=", 1)
            current.setdefault(key.strip(), []).append(value.strip())
        else:
            raise ValueError(f"not a section header or key=value line: {line!r}")
    return sections


def unit_problems(text: str) -> list[str]:
    """What is wrong with a rendered user unit, by its content; empty when it is fine."""
    try:
        unit = parse_unit(text)
    except ValueError as e:
        return [str(e)]
    problems = [f"no [{s}] section" for s in ("Unit", "Service", "Install") if s not in unit]
    service = unit.get("Service", {})
    exec_start = service.get("ExecStart", [])
    if len(exec_start) != 1:
        problems.append(f"expected one ExecStart=, found {exec_start!r}")
    else:
        program = exec_start[0].lstrip("@-:+!").split()[0] if exec_start[0].strip() else ""
        if not (program.startswith(("/", "%h/")) and program.rsplit("/", 1)[-1] == "mossd"):
            problems.append(f"ExecStart must run mossd by absolute path or %h/...: {program!r}")
    if not service.get("Restart"):
        problems.append("no Restart= (a crashed daemon would stay down)")
    wanted = unit.get("Install", {}).get("WantedBy", [])
    if "default.target" not in " ".join(wanted).split():
        problems.append(f"WantedBy must include default.target for a user unit, is {wanted!r}")
    return problems


def hardening_problems(text: str, moss_home: str) -> list[str]:
    """The unit's sandboxing: the daemon may write only under its home, and comes back after a
    crash but not after a clean stop."""
    try:
        service = parse_unit(text).get("Service", {})
    except ValueError as e:
        return [str(e)]

    def last(key: str) -> str | None:
        values = service.get(key)
        return values[-1] if values else None

    problems = []
    for key, want in (
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("Restart", "on-failure"),
    ):
        if last(key) != want:
            problems.append(f"{key}= must be {want}, is {last(key)!r}")
    writable = " ".join(service.get("ReadWritePaths", [])).split()
    if moss_home not in [w.lstrip("-") for w in writable]:
        problems.append(f"ReadWritePaths must include the Moss home {moss_home}, is {writable!r}")
    return problems


def verify_unit(text: str, sandbox: Sandbox, quiet: bool = False) -> tuple[str, list[str]]:
    """`systemd-analyze verify --user` on a rendered unit: ("ok"|"fail"|"skip", messages)."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        return "skip", ["systemd-analyze not found (it comes with Debian's `systemd` package)"]
    unit_dir = sandbox.root / "units"
    unit_dir.mkdir(exist_ok=True)
    runtime = sandbox.root / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    # The unit names where mossd is installed; systemd-analyze checks that it is executable.
    # An absolute path not present here is pointed at the stand-in in the verified copy.
    exec_start = parse_unit(text).get("Service", {}).get("ExecStart", [""])[0]
    program = (exec_start.lstrip("@-:+!").split() or [""])[0]
    if program.startswith("/") and not Path(program).exists():
        if not quiet:
            print(f"note {UNIT}: {program} does not exist here; verifying with a stand-in mossd")
        text = text.replace(program, str(sandbox.mossd))
    path = unit_dir / UNIT.name
    path.write_text(text)
    env = {
        **os.environ,
        "HOME": str(sandbox.home),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(sandbox.home / ".config"),
        "SYSTEMD_PAGER": "",
        "SYSTEMD_LOG_COLOR": "0",
    }
    run = subprocess.run(
        [tool, "verify", "--user", "--man=no", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    output = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    if run.returncode != 0 and any("Failed to initialize manager" in line for line in output):
        return "skip", ["systemd-analyze cannot start a user manager here:", *output]
    if run.returncode != 0 or output:
        return "fail", [f"systemd-analyze verify exited {run.returncode}:", *output]
    return "ok", []


# --- driver -----------------------------------------------------------------------------------


class Report:
    def __init__(self) -> None:
        self.passed = self.failed = self.skipped = 0

    def check(self, name: str, problems: list[str]) -> None:
        if problems:
            self.failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"     {p}")
        else:
            self.passed += 1
            print(f"ok   {name}")

    def skip(self, name: str, why: list[str]) -> None:
        self.skipped += 1
        print(f"SKIP {name}")
        for line in why:
            print(f"     {line}")


# Broken variants of the real files that the checkers must reject: (description, edit).
PLIST_BREAKAGES: list[tuple[str, Callable[[str], str]]] = [
    ("wrong Label", lambda t: t.replace(f"<string>{LABEL}</string>", "<string>x.y</string>", 1)),
    ("RunAtLoad false", lambda t: re.sub(r"(<key>RunAtLoad</key>\s*)<true/>", r"\1<false/>", t)),
    ("no KeepAlive", lambda t: t.replace("<key>KeepAlive</key>", "<key>KeepAliveX</key>")),
    ("not XML", lambda t: t.replace("</plist>", "")),
    ("relative program", lambda t: re.sub(r"<string>/[^<]*/mossd</string>", "<string>mossd</string>", t)),
]
UNIT_BREAKAGES: list[tuple[str, Callable[[str], str]]] = [
    ("no ExecStart", lambda t: re.sub(r"(?m)^ExecStart=", "#ExecStart=", t)),
    ("no [Install]", lambda t: t.replace("[Install]", "[Installx]")),
    ("misspelt key", lambda t: re.sub(r"(?m)^Restart=", "Restrat=", t)),
]
HARDENING_BREAKAGES: list[tuple[str, Callable[[str], str]]] = [
    ("ProtectSystem=full", lambda t: re.sub(r"(?m)^ProtectSystem=.*$", "ProtectSystem=full", t)),
    ("no ReadWritePaths", lambda t: re.sub(r"(?m)^ReadWritePaths=.*$", "", t)),
    ("Restart=always", lambda t: re.sub(r"(?m)^Restart=.*$", "Restart=always", t)),
    ("no NoNewPrivileges", lambda t: re.sub(r"(?m)^NoNewPrivileges=.*$", "", t)),
]
# What only systemd-analyze knows about: a bad value of a known key, an unknown key.
VERIFY_BREAKAGES: list[tuple[str, Callable[[str], str]]] = [
    ("bad Restart= value", lambda t: re.sub(r"(?m)^Restart=.*$", "Restart=bogus", t)),
    ("unknown key", lambda t: t.replace("[Service]", "[Service]\nRestartSecs=2", 1)),
]


def placeholder_problems(found: list[str]) -> list[str]:
    """The template's placeholders against the ones `moss service install` fills in."""
    problems = [f"{p} is not filled in by `moss service install`" for p in found if p not in CLI_PLACEHOLDERS]
    problems += [f"no {p} (the installer fills it in)" for p in CLI_PLACEHOLDERS if p not in found]
    return problems


def installer_output(moss: Path, manager: str, sandbox: Sandbox) -> tuple[str, list[str]]:
    """What `moss service install --dry-run --manager M` prints in the sandbox: (text, problems)."""
    env = {
        **os.environ,
        "HOME": str(sandbox.home),
        "MOSS_HOME": sandbox.value_for("MOSS_HOME"),
        "MOSS_ADDR": sandbox.value_for("ADDR"),
        "NO_COLOR": "1",
    }
    env.pop("XDG_CONFIG_HOME", None)
    run = subprocess.run(
        [str(moss), "service", "install", "--dry-run", "--manager", manager],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    if run.returncode != 0:
        return "", [f"`moss service install --dry-run` exited {run.returncode}: {run.stderr.strip()}"]
    left = sorted({m.group(0) for m in PLACEHOLDER.finditer(run.stdout)})
    return run.stdout, [f"placeholder {p} left in the output" for p in left]


def main(root: Path, moss: Path | None) -> int:
    report = Report()
    plist_src = (root / PLIST).read_text()
    unit_src = (root / UNIT).read_text()

    with tempfile.TemporaryDirectory(prefix="moss-services-") as tmp:
        sandbox = Sandbox(Path(tmp))
        moss_home = sandbox.value_for("MOSS_HOME")

        plist, found = render(plist_src, sandbox)
        if found:
            print(f"note {PLIST}: rendered placeholders {', '.join(found)}")
        report.check(f"{PLIST}: placeholders are the installer's", placeholder_problems(found))
        report.check(f"{PLIST}: plistlib parse and keys", plist_problems(plist, PLIST.name))

        unit, found = render(unit_src, sandbox)
        if found:
            print(f"note {UNIT}: rendered placeholders {', '.join(found)}")
        report.check(f"{UNIT}: placeholders are the installer's", placeholder_problems(found))
        report.check(f"{UNIT}: sections and keys", unit_problems(unit))
        report.check(f"{UNIT}: hardening", hardening_problems(unit, moss_home))

        status, messages = verify_unit(unit, sandbox)
        name = f"{UNIT}: systemd-analyze verify --user"
        if status == "skip":
            report.skip(name, messages)
        else:
            report.check(name, messages)

        # The checkers reject broken variants of the same files.
        for what, breakage in PLIST_BREAKAGES:
            broken = breakage(plist)
            assert broken != plist, f"breakage {what!r} changed nothing in {PLIST}"
            report.check(
                f"{PLIST} with {what} is rejected",
                [] if plist_problems(broken, PLIST.name) else ["accepted"],
            )
        for what, breakage in UNIT_BREAKAGES:
            broken = breakage(unit)
            assert broken != unit, f"breakage {what!r} changed nothing in {UNIT}"
            report.check(f"{UNIT} with {what} is rejected", [] if unit_problems(broken) else ["accepted"])
        for what, breakage in HARDENING_BREAKAGES:
            broken = breakage(unit)
            assert broken != unit, f"breakage {what!r} changed nothing in {UNIT}"
            report.check(
                f"{UNIT} with {what} is rejected",
                [] if hardening_problems(broken, moss_home) else ["accepted"],
            )
        for what, breakage in VERIFY_BREAKAGES if status != "skip" else []:
            verdict, _ = verify_unit(breakage(unit), sandbox, quiet=True)
            report.check(
                f"{UNIT} with {what} is rejected by systemd-analyze",
                [] if verdict == "fail" else [f"verify said {verdict}"],
            )

        # The files the installer writes, as it writes them.
        if moss is not None:
            text, problems = installer_output(moss, "launchd", sandbox)
            name = f"{moss.name} service install --dry-run --manager launchd"
            report.check(f"{name}: plistlib parse and keys", problems or plist_problems(text, PLIST.name))
            text, problems = installer_output(moss, "systemd", sandbox)
            name = f"{moss.name} service install --dry-run --manager systemd"
            report.check(
                f"{name}: sections, keys and hardening",
                problems or unit_problems(text) + hardening_problems(text, moss_home),
            )
            if not problems:
                verdict, messages = verify_unit(text, sandbox)
                if verdict == "skip":
                    report.skip(f"{name}: systemd-analyze verify --user", messages)
                else:
                    report.check(f"{name}: systemd-analyze verify --user", messages)

    skipped = f", {report.skipped} skipped" if report.skipped else ""
    print(f"services: {report.passed} passed, {report.failed} failed{skipped}")
    return 1 if report.failed else 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: check_services.py REPO_ROOT [MOSS_BIN]")
    moss_bin = Path(sys.argv[2]).resolve() if len(sys.argv) == 3 else None
    if moss_bin is not None and not os.access(moss_bin, os.X_OK):
        sys.exit(f"check_services.py: {moss_bin} is not an executable moss binary")
    sys.exit(main(Path(sys.argv[1]).resolve(), moss_bin))
