"""A real S3 protocol server for the store tests: moto's ``ThreadedMotoServer`` on loopback,
reached through s3fs exactly as a bucket would be (as s3fs's own tests do).

One server per test process (fsspec caches its filesystems, so an endpoint must not change
under them); each test gets its own bucket. Child processes get the same endpoint through
the usual AWS environment variables.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing-key-id",
    "AWS_SECRET_ACCESS_KEY": "testing-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The loopback endpoint of a moto S3 server; the AWS environment points at it."""
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = {k: os.environ.get(k) for k in (*CREDENTIALS, "AWS_ENDPOINT_URL")}
    os.environ.update({**CREDENTIALS, "AWS_ENDPOINT_URL": endpoint})
    try:
        yield endpoint
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


def aws_env(endpoint: str) -> dict[str, str]:
    """The environment a child process needs to reach the server."""
    return {**os.environ, **CREDENTIALS, "AWS_ENDPOINT_URL": endpoint}


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    """``s3://<fresh bucket>/runs``: a store URL nobody else uses."""
    import s3fs

    name = f"evalkit-{secrets.token_hex(4)}"
    s3fs.S3FileSystem(use_listings_cache=False).mkdir(name)
    return f"s3://{name}/runs"
