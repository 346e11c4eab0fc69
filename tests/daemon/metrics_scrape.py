# SPDX-License-Identifier: Apache-2.0
"""An HTTP exchange with an lcpsimd --http (live or --replay), and its /metrics read as
samples, parsed by prometheus_client's text parser (Debian's python3-prometheus-client):
what the --http tests talk to the daemon and read its counters with. Imported from the
tests' own directory."""

import socket

from prometheus_client.parser import text_string_to_metric_families


def receive(s, enough=lambda data: False):
    """What the socket s receives until the daemon closes it or enough(what came) holds."""
    data = b""
    while not enough(data):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def parse_reply(data):
    """(status, headers with lower-case names, body) of one HTTP reply's bytes; None until
    its head has come."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.decode().partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(head.split(b" ")[1]), headers, body


def whole_reply(data):
    """Whether data holds a reply with all of its Content-Length."""
    reply = parse_reply(data)
    return reply is not None and len(reply[2]) >= int(reply[1].get("content-length", "-1")) >= 0


def exchange(host, port, raw):
    """Sends raw bytes; (status, headers, body) of the reply, read until the daemon closes
    the connection or the body has its Content-Length."""
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(raw)
        return parse_reply(receive(s, whole_reply))


def get(host, port, path):
    """(status, headers, body) of GET path."""
    return exchange(host, port, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                    b"Connection: close\r\n\r\n")


def scrape(host, port):
    """(headers, samples) of /metrics, which must answer 200: samples maps
    (name, sorted (label, value) pairs) to the sample's value."""
    status, headers, body = get(host, port, "/metrics")
    assert status == 200, status
    samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return headers, samples
