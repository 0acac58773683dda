"""An observation whose input holds an image (LangfuseMedia): the SDK replaces it with its media
reference string and uploads the bytes in the background; flush waits for the upload. Then the
same bytes are announced again through the SDK's API client, which the server must de-duplicate."""

import base64
import os

from common import CASE, MAJOR, client, done
from langfuse.media import LangfuseMedia

image = base64.b64decode(os.environ["CONFORMANCE_IMAGE_BASE64"])
lf = client()
media = LangfuseMedia(content_bytes=image, content_type="image/png")

start = lf.start_as_current_span if MAJOR == 3 else lambda **kw: lf.start_as_current_observation(as_type="span", **kw)
with start(name=f"{CASE}-media", input={"question": CASE, "image": media}) as span:
    span.update(output="described")
    trace_id = span.trace_id
    observation_id = span.id

lf.flush()
again = lf.api.media.get_upload_url(
    trace_id=trace_id,
    observation_id=observation_id,
    content_type="image/png",
    content_length=len(image),
    sha256hash=media._content_sha256_hash,
    field="input",
)
lf.shutdown()
done(
    {
        "traceId": trace_id,
        "observationId": observation_id,
        "mediaId": media._media_id,
        "referenceString": media._reference_string,
        "againUploadUrl": again.upload_url,
        "againMediaId": again.media_id,
    }
)
