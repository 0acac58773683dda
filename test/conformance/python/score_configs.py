"""A numeric score config, read back by id, and a score that names it."""

import os

from common import MAJOR, api, client, close, done, request_or_kwargs

lf = client()
configs = api(lf).score_configs
name = os.environ["CONFORMANCE_CONFIG_NAME"]
module = "langfuse.api.resources.score_configs.types" if MAJOR < 4 else "langfuse.api.score_configs"
created = request_or_kwargs(
    configs.create, "CreateScoreConfigRequest", module, name=name, data_type="NUMERIC", min_value=0, max_value=1
)
fetched = configs.get_by_id(created.id)
trace_id = os.environ["CONFORMANCE_TRACE_ID"]
if MAJOR == 2:
    lf.score(trace_id=trace_id, name=name, value=0.5, config_id=created.id)
else:
    lf.create_score(trace_id=trace_id, name=name, value=0.5, config_id=created.id)
close(lf)
done({"id": created.id, "name": fetched.name, "dataType": str(fetched.data_type)})
