"""A text prompt in two versions (production on the first), a chat prompt; read by label and by version."""

from common import CASE, client, close, done

lf = client()
text = f"{CASE}-text"
chat = f"{CASE}-chat"
lf.create_prompt(name=text, prompt="Hello {{name}}", labels=["production"], config={"temperature": 0.1}, type="text")
lf.create_prompt(name=text, prompt="Hi {{name}}", labels=["staging"], type="text")
lf.create_prompt(
    name=chat,
    prompt=[{"role": "system", "content": "You are {{role}}"}, {"role": "user", "content": "{{q}}"}],
    labels=["production"],
    type="chat",
)
production = lf.get_prompt(text, cache_ttl_seconds=0)
v2 = lf.get_prompt(text, version=2, cache_ttl_seconds=0)
staging = lf.get_prompt(text, label="staging", cache_ttl_seconds=0)
chat_prompt = lf.get_prompt(chat, type="chat", cache_ttl_seconds=0)
close(lf)
done(
    {
        "text": text,
        "production": {"version": production.version, "compiled": production.compile(name="Ada"), "config": production.config},
        "v2": {"version": v2.version, "compiled": v2.compile(name="Ada")},
        "staging": {"version": staging.version},
        "chat": {"name": chat, "messages": [{"role": m["role"], "content": m["content"]} for m in chat_prompt.compile(role="a tester", q="2+2?")]},
    }
)
