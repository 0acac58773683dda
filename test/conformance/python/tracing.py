"""A trace with a root span, a child span updated after creation, and a generation with usage."""

from common import CASE, MAJOR, client, close, done

lf = client()
usage = {"input": 10, "output": 20, "total": 30}

if MAJOR == 2:
    trace = lf.trace(name=f"{CASE}-root", user_id=f"{CASE}-user", session_id=f"{CASE}-session", input={"q": CASE})
    span = trace.span(name="step", input="step-in")
    span.update(output="step-out")
    span.end()
    gen = span.generation(name="llm", model="gpt-4o-mini", input="prompt")
    gen.end(output="completion", usage=usage)
    trace.update(output={"a": CASE})
    trace_id = trace.id
else:
    span_fn = lf.start_as_current_span if MAJOR == 3 else lambda **kw: lf.start_as_current_observation(as_type="span", **kw)
    gen_fn = lf.start_as_current_generation if MAJOR == 3 else lambda **kw: lf.start_as_current_observation(as_type="generation", **kw)

    def body():
        with span_fn(name=f"{CASE}-root", input={"q": CASE}) as root:
            if MAJOR == 3:
                root.update_trace(user_id=f"{CASE}-user", session_id=f"{CASE}-session")
            with span_fn(name="step", input="step-in") as step:
                step.update(output="step-out")
                with gen_fn(name="llm", model="gpt-4o-mini", input="prompt") as gen:
                    gen.update(output="completion", usage_details=usage)
            root.update(output={"a": CASE})
            if hasattr(root, "update_trace"):
                root.update_trace(input={"q": CASE}, output={"a": CASE})
            return root.trace_id

    if MAJOR >= 4:
        from langfuse import propagate_attributes

        with propagate_attributes(user_id=f"{CASE}-user", session_id=f"{CASE}-session"):
            trace_id = body()
    else:
        trace_id = body()

close(lf)
done({"traceId": trace_id})
