"""A dataset read as it was at a time (`get_dataset(name, version=...)`) after later edits, and as it is now."""

import time
from datetime import datetime, timezone

from common import CASE, client, close, done

lf = client()
name = f"{CASE}-versioned"
lf.create_dataset(name=name)
lf.create_dataset_item(dataset_name=name, id=f"{CASE}-a", input="a1")
lf.create_dataset_item(dataset_name=name, id=f"{CASE}-b", input="b1")
# Stored times are microseconds apart: a pause on each side keeps `then` between the writes.
time.sleep(0.05)
then = datetime.now(timezone.utc)
time.sleep(0.05)
lf.create_dataset_item(dataset_name=name, id=f"{CASE}-a", input="a2")
lf.create_dataset_item(dataset_name=name, id=f"{CASE}-c", input="c1")


def items(dataset):
    return sorted([item.id.removeprefix(f"{CASE}-"), item.input] for item in dataset.items)


old = items(lf.get_dataset(name, version=then))
now = items(lf.get_dataset(name))
close(lf)
done({"past": old, "now": now})
