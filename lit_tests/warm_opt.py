"""A warm `cleave-opt` for the lit tests: one server process imports Cleave-IR once and forks a child
per RUN line, instead of each line paying about 0.4 s of imports (sympy, xDSL, the dialects).

    python warm_opt.py serve SOCKET          # the server (tests/test_lit.py starts one per pytest worker)
    python warm_opt.py SOCKET ARGS...        # what lit runs for `cleave-opt ARGS...` (lit.cfg)

The client hands its stdin, stdout and stderr to the server (SCM_RIGHTS) with its argv, working
directory and environment; the forked child runs `cleave_ir.driver.main` on them and reports the exit
status, which the client exits with. The child is a fresh copy of a process that only imported: each
run sees the state a new `cleave-opt` process would. Without a server at SOCKET, the client runs
`cleave-opt` itself.
"""

from __future__ import annotations

import json
import os
import socket
import sys


def client(path: str, args: list[str]) -> int:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
    except OSError:
        os.execvp("cleave-opt", ["cleave-opt", *args])
    request = json.dumps({"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
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


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the forked child: become `cleave-opt ARGS` on the client's streams, report, exit."""
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # (the server's setting) a child's own subprocesses are waited for
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["cleave-opt", *request["argv"]]
    from cleave_ir.driver import main

    code = 0
    try:
        result = main()
        code = result if isinstance(result, int) else 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
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
    from cleave_ir.universe import get_all_dialects, get_all_passes

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
    else:
        sys.exit(client(sys.argv[1], sys.argv[2:]))
