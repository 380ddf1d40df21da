"""Schemathesis checks of the Moss daemon (loaded through SCHEMATHESIS_HOOKS by run-schemathesis.sh).

`refusal_is_the_envelope`: every response of status 400 or more is the error envelope
`{"error": {"code", "message", "status", "details"?}}`, served as JSON, whose `status` is the
HTTP status. Together with schemathesis's own `not_a_server_error`, a run fails on any 5xx and on
any refusal that is not the envelope.

The run uses two workers (threads). Hypothesis describes a filter's lambda by reading its source
through `inspect` and `linecache`, and drops linecache's "<string>" entry as it does; two threads
doing this at once can make one of them raise where a replay does not, which Hypothesis reports
as a flaky "Runtime Error" of the generator, not of the daemon. The description is serialised
behind one lock below; it is computed once per lambda and cached, so the lock costs nothing
measurable.
"""

import threading

import schemathesis
from hypothesis.internal import filtering, lambda_sources

_DESCRIBE_LOCK = threading.Lock()
_describe = lambda_sources.lambda_description


def _lambda_description_serialised(f):
    with _DESCRIBE_LOCK:
        return _describe(f)


lambda_sources.lambda_description = _lambda_description_serialised
filtering.lambda_description = _lambda_description_serialised


@schemathesis.check
def refusal_is_the_envelope(ctx, response, case):
    if response.status_code < 400:
        return None
    content_type = response.headers.get("content-type", [""])
    if isinstance(content_type, list):
        content_type = content_type[0] if content_type else ""
    assert content_type.split(";")[0].strip().lower() == "application/json", (
        f"a {response.status_code} refusal is not JSON (content-type {content_type!r}): "
        f"{response.text[:200]!r}"
    )
    try:
        body = response.json()
    except Exception as e:  # noqa: BLE001 - any decoding failure is the finding
        raise AssertionError(f"a {response.status_code} refusal is not valid JSON: {e}") from e
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"a {response.status_code} refusal has no `error` object: {body!r}"
    assert isinstance(error.get("code"), str) and error["code"], f"no `error.code`: {body!r}"
    assert isinstance(error.get("message"), str) and error["message"], f"no `error.message`: {body!r}"
    assert error.get("status") == response.status_code, (
        f"`error.status` {error.get('status')!r} is not the HTTP status {response.status_code}: {body!r}"
    )
    return None
