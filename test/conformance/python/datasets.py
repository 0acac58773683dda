"""A dataset, two items (ids chosen by the caller so a retry upserts), read back through the SDK."""

from common import CASE, client, close, done

lf = client()
name = f"{CASE}-dataset"
lf.create_dataset(name=name, description="conformance")
ids = [f"{CASE}-item-1", f"{CASE}-item-2"]
for i, item_id in enumerate(ids):
    lf.create_dataset_item(dataset_name=name, id=item_id, input={"n": i}, expected_output={"double": 2 * i}, metadata={"case": CASE})
# The same id again: an upsert, not a third item.
lf.create_dataset_item(dataset_name=name, id=ids[0], input={"n": 0}, expected_output={"double": 0}, metadata={"case": CASE, "again": True})
dataset = lf.get_dataset(name)
close(lf)
done({"name": name, "itemIds": sorted(item.id for item in dataset.items)})
