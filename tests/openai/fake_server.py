"""A small HTTP server for fault tests: each request gets the next scripted behaviour.

It speaks just enough HTTP/1.1 to do what real servers do on a bad day: stream SSE slowly,
answer 429 or 500, send malformed events, or drop the connection in the middle of a reply.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    status: int = 200
    events: list[Any] = field(default_factory=list)
    """SSE data items: dicts are sent as JSON, strings as they are (``[DONE]``, garbage)."""
    raw_lines: list[str] = field(default_factory=list)
    """Extra lines sent before the events (comments such as ``: keepalive``)."""
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    first_byte_delay_s: float = 0.0
    cut_after: int | None = None
    """Drop the connection (mid-chunk) after this many events."""


def chunk_event(content: str | None = None, **delta: Any) -> dict:
    if content is not None:
        delta["content"] = content
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def finish_event(reason: str = "stop") -> dict:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def usage_event(prompt: int = 10, completion: int = 5, cached: int = 0) -> dict:
    return {
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def logprobs_reply(*tokens: tuple[str, float]) -> Reply:
    top = [{"token": t, "logprob": lp} for t, lp in tokens]
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"content": tokens[0][0]},
                "finish_reason": "length",
                "logprobs": {
                    "content": [
                        {"token": tokens[0][0], "logprob": tokens[0][1], "top_logprobs": top}
                    ]
                },
            }
        ]
    }
    return Reply(body=json.dumps(body))


def sse_reply(*texts: str, **kwargs: Any) -> Reply:
    events: list[Any] = [chunk_event(t) for t in texts]
    events += [finish_event(), usage_event(), "[DONE]"]
    return Reply(events=events, **kwargs)


class FakeServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self.port = self._socket.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._socket.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> dict[str, Any]:
        data = b""
        while b"\r\n\r\n" not in data:
            part = conn.recv(65536)
            if not part:
                break
            data += part
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            body += conn.recv(65536)
        payload = json.loads(body) if body else None
        return {"method": method, "path": path, "headers": headers, "json": payload}

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                request = self._read_request(conn)
            except (OSError, ValueError):
                return
            self.requests.append(request)
            reply = self.replies.pop(0) if self.replies else Reply(status=500, body="no reply")
            time.sleep(reply.first_byte_delay_s)
            try:
                if reply.status != 200 or not (reply.events or reply.raw_lines):
                    self._send_plain(conn, reply)
                else:
                    self._send_sse(conn, reply)
            except OSError:
                return

    def _send_plain(self, conn: socket.socket, reply: Reply) -> None:
        body = reply.body.encode()
        headers = {"content-type": "application/json", **reply.headers}
        head = f"HTTP/1.1 {reply.status} X\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        conn.sendall(
            (head + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body
        )

    def _send_sse(self, conn: socket.socket, reply: Reply) -> None:
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            "transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        conn.sendall(head.encode())

        def chunk(text: str) -> None:
            data = text.encode()
            conn.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        for line in reply.raw_lines:
            chunk(line + "\n")
        for index, event in enumerate(reply.events):
            if reply.cut_after is not None and index == reply.cut_after:
                conn.sendall(b"400\r\npartial")  # a chunk that never completes
                conn.shutdown(socket.SHUT_RDWR)
                return
            text = event if isinstance(event, str) else json.dumps(event)
            chunk(f"data: {text}\n\n")
            time.sleep(0.002)
        conn.sendall(b"0\r\n\r\n")
