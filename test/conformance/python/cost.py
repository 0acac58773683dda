"""Generations whose cost the server computes: a known model with usage and no cost, one with a cost
sent, and one priced by a model definition made through the SDK's models API (5.x only)."""

import os

from common import CASE, api, client, close, done

lf = client()
model = api(lf).models.create(
    model_name=f"{CASE}-model",
    match_pattern=os.environ["CUSTOM_PATTERN"],
    unit="TOKENS",
    input_price=0.001,
    output_price=0.002,
)
ids = {}


def generation(key: str, **attributes):
    with lf.start_as_current_observation(as_type="generation", name=key, **attributes) as gen:
        ids[key] = {"traceId": gen.trace_id, "id": gen.id}


generation("usage", model="gpt-4o", usage_details={"input": 1000, "output": 500})
generation("sent", model="gpt-4o", usage_details={"input": 1000, "output": 500}, cost_details={"input": 0.5, "output": 0.25})
generation("custom", model=os.environ["CUSTOM_MODEL"], usage_details={"input": 10, "output": 20})
close(lf)
done({"modelId": model.id, "generations": ids})
