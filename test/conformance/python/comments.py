"""A comment on a trace through the generated client, then listed for that trace."""

import os

from common import CASE, MAJOR, api, client, close, done, request_or_kwargs

lf = client()
trace_id = os.environ["CONFORMANCE_TRACE_ID"]
comments = api(lf).comments
module = "langfuse.api.resources.comments.types" if MAJOR < 4 else "langfuse.api.comments"
created = request_or_kwargs(
    comments.create,
    "CreateCommentRequest",
    module,
    project_id=os.environ["CONFORMANCE_PROJECT_ID"],
    object_type="TRACE",
    object_id=trace_id,
    content=f"{CASE} comment",
)
listed = comments.get(object_type="TRACE", object_id=trace_id)
close(lf)
done({"id": created.id, "listed": [c.content for c in listed.data]})
