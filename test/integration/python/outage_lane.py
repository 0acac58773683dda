"""Steady traffic from the Python SDK: a trace of one span every half second for LANE_SECONDS,
each flushed before the next; prints the trace ids it created as one JSON line."""

import json
import os
import sys
import time

from langfuse import Langfuse

lf = Langfuse(
    public_key=os.environ["LANGFUSE_PUBLIC_KEY"],
    secret_key=os.environ["LANGFUSE_SECRET_KEY"],
    host=os.environ["LANGFUSE_HOST"],
    timeout=30,
)
stop_at = time.monotonic() + float(os.environ["LANE_SECONDS"])
ids = []
k = 0
while time.monotonic() < stop_at:
    with lf.start_as_current_observation(as_type="span", name=f"python-{k}", input={"k": k}) as span:
        span.update(output="done")
        ids.append(span.trace_id)
    lf.flush()
    k += 1
    time.sleep(0.5)
lf.shutdown()
sys.stdout.write(json.dumps({"traceIds": ids}) + "\n")
