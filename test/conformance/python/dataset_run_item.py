"""A dataset run item linked by an observation id alone, through the generated client's model."""

import os

from common import CASE, api, client, close, done, request_or_kwargs

lf = client()
name = f"{CASE}-linked"
lf.create_dataset(name=name)
lf.create_dataset_item(dataset_name=name, id=f"{CASE}-item", input="q")
run_item = request_or_kwargs(
    api(lf).dataset_run_items.create,
    "CreateDatasetRunItemRequest",
    "langfuse.api",
    run_name=f"{CASE}-run",
    dataset_item_id=f"{CASE}-item",
    observation_id=os.environ["CONFORMANCE_OBSERVATION_ID"],
)
close(lf)
done({"traceId": run_item.trace_id, "observationId": run_item.observation_id, "runName": run_item.dataset_run_name})
