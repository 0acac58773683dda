"""Deletes through the Python SDK's generated client: a prompt version, then the prompt, then traces one and in bulk."""

import os

from common import CASE, api, client, close, done

lf = client()
name = f"{CASE}-prompt"
lf.create_prompt(name=name, prompt="one", labels=["production"], type="text")
lf.create_prompt(name=name, prompt="two", type="text")
api(lf).prompts.delete(name, version=2)
after_version = lf.get_prompt(name, label="latest", cache_ttl_seconds=0).version
api(lf).prompts.delete(name)
one = api(lf).trace.delete(os.environ["DELETE_TRACE"])
many = api(lf).trace.delete_multiple(trace_ids=os.environ["DELETE_TRACES"].split(","))
close(lf)
done({"latestAfterVersionDelete": after_version, "one": one.message, "many": many.message})
