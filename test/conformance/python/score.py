"""A numeric score on a trace (v5 sends it to POST /api/public/scores, older ones as a batch event)."""

import os

from common import CASE, MAJOR, client, close, done

lf = client()
trace_id = os.environ["CONFORMANCE_TRACE_ID"]
if MAJOR == 2:
    lf.score(trace_id=trace_id, name=f"{CASE}-quality", value=0.75, comment="conformance")
else:
    lf.create_score(trace_id=trace_id, name=f"{CASE}-quality", value=0.75, comment="conformance", data_type="NUMERIC")
close(lf)
done({"traceId": trace_id, "name": f"{CASE}-quality"})
