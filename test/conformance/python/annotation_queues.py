"""An annotation queue with a score config, two items (one completed, one removed), read back through the SDK's models."""

import os

from common import api, client, close, done



def value(enum_or_text):
    """An enum member's wire value, or the text a client without enum types gives."""
    return getattr(enum_or_text, "value", enum_or_text)


lf = client()
queues = api(lf).annotation_queues
config_id = os.environ["CONFORMANCE_CONFIG_ID"]
trace_id = os.environ["CONFORMANCE_TRACE_ID"]
queue = queues.create_queue(name=os.environ["CONFORMANCE_QUEUE_NAME"], score_config_ids=[config_id])
assert queues.get_queue(queue.id).score_config_ids == [config_id]
kept = queues.create_queue_item(queue.id, object_id=trace_id, object_type="TRACE")
removed = queues.create_queue_item(queue.id, object_id=f"{trace_id}-session", object_type="SESSION")
completed = queues.update_queue_item(queue.id, kept.id, status="COMPLETED")
deleted = queues.delete_queue_item(queue.id, removed.id)
listed = queues.list_queue_items(queue.id, status="COMPLETED")
close(lf)
done(
    {
        "queueId": queue.id,
        "itemId": kept.id,
        "completedAt": completed.completed_at is not None,
        "deleted": deleted.success,
        "listed": [(i.object_id, value(i.object_type), value(i.status)) for i in listed.data],
        "total": listed.meta.total_items,
    }
)
