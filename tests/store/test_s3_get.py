"""A cold page's ranged GET on S3 is signed exactly as the AWS SDK signs it (botocore's
signer is the reference), and only a plain endpoint with explicit keys is read that way."""

from __future__ import annotations

from datetime import datetime

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from podium.store.read import s3_get
from podium.store.read.s3_get import Endpoint, RangedObject

KEYS = {"s3.access-key-id": "AKIDEXAMPLE", "s3.secret-access-key": "wJalrXUtnFEMI/K7MDENG"}


def botocore_headers(end: Endpoint, url: str, extra: dict[str, str]) -> dict[str, str]:
    request = AWSRequest(method="GET", url=url, headers=extra)
    request.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    credentials = Credentials(end.access_key, end.secret_key, end.session_token)
    S3SigV4Auth(credentials, "s3", end.region).add_auth(request)
    return {k.lower(): v for k, v in request.headers.items()}


@pytest.mark.parametrize(
    ("properties", "path"),
    [
        ({"s3.endpoint": "http://127.0.0.1:9000"}, "s3://podium/warehouse/t/data/0.parquet"),
        (
            {
                "s3.endpoint": "https://store.example.com",
                "s3.region": "eu-west-3",
                "s3.session-token": "FwoGZXIvYXdzEJr//////////",
                "s3.force-virtual-addressing": "true",
            },
            "s3://bucket-1/w h/ä%20+=,;@$!'()*&/x~y.parquet",
        ),
    ],
)
def test_the_signature_is_the_sdks(properties: dict[str, str], path: str) -> None:
    end = s3_get.endpoint({**KEYS, **properties})
    assert end is not None
    target = RangedObject(end, path, 1000)
    url = f"{end.scheme}://{target.host}{target.path}"
    theirs = botocore_headers(end, url, {"Range": "bytes=10-99"})
    when = datetime.strptime(theirs["x-amz-date"], "%Y%m%dT%H%M%SZ")
    ours = s3_get.signed_headers(
        end, "GET", target.host, target.path, {"Range": "bytes=10-99"}, when
    )
    assert ours["authorization"] == theirs["authorization"]
    assert {k: v for k, v in ours.items() if k != "host"} == theirs


@pytest.mark.parametrize(
    "properties",
    [
        {},  # keys from the environment or an instance profile: the SDK finds them
        {"s3.endpoint": "http://127.0.0.1:9000"},
        {**KEYS},  # AWS's own endpoints: the SDK's addressing rules
        {**KEYS, "s3.endpoint": "http://127.0.0.1:9000", "s3.proxy-uri": "http://proxy:3128"},
        {**KEYS, "s3.endpoint": "http://127.0.0.1:9000/prefix"},
    ],
)
def test_anything_but_a_plain_endpoint_goes_through_pyarrow(properties: dict[str, str]) -> None:
    assert s3_get.endpoint(properties) is None
