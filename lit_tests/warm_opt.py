"""A warm `cleave-opt` (and `cleave-run`, `filecheck`) for the lit tests: one server process imports
Cleave-IR once and forks a child per tool of a RUN line, instead of each paying its imports (about
0.4 s for cleave-opt: sympy, xDSL, the dialects; 0.8 s for cleave-run; 0.1 s for filecheck).

    python warm_opt.py serve SOCKET                 # the server (tests/test_lit.py starts one per pytest worker)
    python warm_opt.py SOCKET ARGS...               # what lit runs for `cleave-opt ARGS...` (lit.cfg)
    python warm_opt.py --tool TOOL SOCKET ARGS...   # `TOOL ARGS...`, TOOL one of `TOOLS` (lit.cfg)

The client hands its stdin, stdout and stderr to the server (SCM_RIGHTS) with its argv, working
directory and environment; the forked child runs the tool's console-script entry point
(`cleave_ir.driver.main`, ...) on them and reports the exit status, which the client exits with. The
child is a fresh copy of a process that only imported: each run sees the state a new tool process
would. Without a server at SOCKET, the client runs the tool itself.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys


# the tools a child can become: the module and function of each console script's entry point
TOOLS = {"cleave-opt": ("cleave_ir.driver", "main"), "cleave-run": ("cleave_ir.run", "main"), "filecheck": ("filecheck.main", "main")}


def client(path: str, args: list[str], tool: str = "cleave-opt") -> int:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
    except OSError:
        os.execvp(tool, [tool, *args])
    request = json.dumps({"tool": tool, "argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(s, [len(request).to_bytes(8, "little") + request], [0, 1, 2])
    reply = b""
    while len(reply) < 4:
        chunk = s.recv(4 - len(reply))
        if not chunk:
            print("error: warm_opt: the cleave-opt server ended without a status", file=sys.stderr)
            return 1
        reply += chunk
    return int.from_bytes(reply, "little", signed=True)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _fresh_stdio() -> None:
    """sys.stdin, stdout and stderr made anew on descriptors 0-2, as a new interpreter makes them: the
    server's were made for its own streams (buffering, seekability: filecheck's `reconfigure` of a
    wrapper made for a file fails on a pipe)."""
    import io

    for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buf = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        # CPython's create_stdio: newline "\n"; line-buffered on a terminal, and stderr always
        new = io.TextIOWrapper(buf, encoding=old.encoding, errors=old.errors, newline="\n", line_buffering=fd == 2 or raw.isatty())
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the forked child: become `TOOL ARGS` (cleave-opt by default) on the client's streams, report, exit."""
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # (the server's setting) a child's own subprocesses are waited for
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    _fresh_stdio()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tool = request.get("tool", "cleave-opt")
    sys.argv = [tool, *request["argv"]]
    module, entry = TOOLS[tool]
    main = getattr(importlib.import_module(module), entry)
    if tool == "filecheck":  # colours as for a new process on these streams (decided at import)
        import filecheck.colors

        filecheck.colors.COLOR_SUPPORT = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()

    code = 0
    try:
        sys.exit(main())  # as the console script does
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:  # sys.exit("message"): the message on stderr, status 1
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - as an uncaught exception would end the process
        import traceback

        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        conn.sendall(int(code).to_bytes(4, "little", signed=True))
        os._exit(0)


def serve(path: str) -> None:
    import signal

    import cleave_ir.driver  # noqa: F401 - the imports every child shares
    import cleave_ir.run  # noqa: F401
    import filecheck.main  # noqa: F401
    from cleave_ir.universe import get_all_dialects, get_all_passes

    # and those most children would import on first use, each child again: sympy's Add imports
    # sympy.tensor.tensor (and sympy.combinatorics, 0.3 s) at the first sum of most pipelines, simplify
    # sympy.physics.units, Eq sympy.assumptions.wrapper; printing the output xDSL's printer; the passes
    # threadpoolctl; `-t tilelang` the emitter (about 10 s of lit_tests' 164 cleave-opt lines)
    for lazy in (
        "sympy.tensor.tensor", "sympy.physics.units", "sympy.assumptions.wrapper", "xdsl.syntax_printer",
        "xdsl.targets.mlir", "threadpoolctl", "cleave_ir.tilelang_emitter",
    ):
        try:
            importlib.import_module(lazy)
        except ImportError:  # (not installed: the child imports nothing either)
            pass

    for factory in get_all_dialects().values():
        factory()
    for factory in get_all_passes().values():
        factory()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        try:
            head, fds, _, _ = socket.recv_fds(conn, 8, 3)
            request = json.loads(_recv_exact(conn, int.from_bytes(head, "little")))
        except (OSError, EOFError, ValueError):
            conn.close()
            continue
        if os.fork() == 0:
            server.close()
            _child(conn, request, fds)
        for fd in fds:
            os.close(fd)
        conn.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif sys.argv[1] == "--tool":
        sys.exit(client(sys.argv[3], sys.argv[4:], sys.argv[2]))
    else:
        sys.exit(client(sys.argv[1], sys.argv[2:]))
