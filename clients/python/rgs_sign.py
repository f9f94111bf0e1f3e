"""Signing a request to the RGS operator API (contract 5.1), Python standard library only.

    canonical = METHOD "\\n" PATH "\\n" TIMESTAMP "\\n" lowercase_hex(sha256(body bytes))
    X-Rgs-Signature = base64(HMAC-SHA256(key = the apiSecret's text, canonical))

Run as a script, it launches a session:

    RGS_URL=http://127.0.0.1:3000 RGS_OPERATOR_ID=... RGS_KEY_ID=... RGS_API_SECRET=... \\
        python3 clients/python/rgs_sign.py [playerRef] [demo|real]

and prints the HTTP status and the answer's JSON on one line each.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid


def sign(secret, method, path, timestamp, body):
    """The X-Rgs-Signature of one request.

    secret: the apiSecret exactly as issued (its text is the key: never hex-decode it);
    path: the absolute path without the query string ("/v1/rounds", not "/v1/rounds?limit=10");
    timestamp: the X-Rgs-Timestamp header's exact text; body: the exact bytes sent (b"" for none).
    """
    if isinstance(body, str):
        body = body.encode("utf-8")
    canonical = "\n".join([method.upper(), path, str(timestamp), hashlib.sha256(body).hexdigest()])
    mac = hmac.new(secret.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(mac).decode("ascii")


def signed_headers(key_id, secret, method, path, body, now=None):
    """The three headers of contract 5.1 for a request sent now."""
    timestamp = str(int(now if now is not None else time.time()))
    return {
        "X-Rgs-Key-Id": key_id,
        "X-Rgs-Timestamp": timestamp,
        "X-Rgs-Signature": sign(secret, method, path.split("?")[0], timestamp, body),
    }


def call(base_url, key_id, secret, method, path_and_query, payload=None):
    """One signed request; returns (status, parsed JSON answer)."""
    # serialise once and send exactly these bytes: the signature covers them
    body = b"" if payload is None else json.dumps(payload, separators=(",", ":")).encode("utf-8")
    headers = {"Content-Type": "application/json", **signed_headers(key_id, secret, method, path_and_query, body)}
    request = urllib.request.Request(base_url.rstrip("/") + path_and_query, data=body or None, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"null")


def main():
    try:
        base_url, operator_id = os.environ["RGS_URL"], os.environ["RGS_OPERATOR_ID"]
        key_id, secret = os.environ["RGS_KEY_ID"], os.environ["RGS_API_SECRET"]
    except KeyError as missing:
        sys.exit(f"set RGS_URL, RGS_OPERATOR_ID, RGS_KEY_ID and RGS_API_SECRET (missing {missing})")
    player_ref = sys.argv[1] if len(sys.argv) > 1 else "player-1001"
    mode = sys.argv[2] if len(sys.argv) > 2 else "demo"
    launch = {
        "operatorId": operator_id,
        "playerRef": player_ref,
        "gameCode": "dice",
        "currency": "EUR",
        "lang": "en",
        "jurisdiction": "MT",
        "mode": mode,
        # always a requestUuid, so that a retry cannot make a second session (D17)
        "requestUuid": str(uuid.uuid4()),
    }
    status, answer = call(base_url, key_id, secret, "POST", "/v1/session", launch)
    print(status)
    print(json.dumps(answer))
    sys.exit(0 if status == 200 else 1)


if __name__ == "__main__":
    main()
