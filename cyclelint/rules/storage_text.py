"""What the CYC4xx findings of ``storage.py`` say."""
import libcst as cst

MSG_EXC = ("{what} kept in {where}: its traceback holds this frame and every local in it (tensors included) in a "
           "cycle; keep str(e) or traceback.format_exception(e) instead, or del it when done")
MSG_FRAME = ("{what} kept in {where}: a frame holds every local (tensors included) and sits in a cycle; keep the "
             "fields you need (f_code.co_name, f_lineno) or del it in a finally block")
MSG_NEW_EXC = ("exception bound to local {name} and raised from this frame: its traceback holds the frame, which "
               "holds {name} — a cycle; raise the exception directly (raise Error(...) from e)")
MSG_CACHE = ("{deco} on method {name} caches every instance it is called with ({why}) forever; "
             "cache a module-level function of the arguments, or keep a per-instance dict")
WHY_UNBOUNDED = "no maxsize: every instance ever used stays"  # all a CYC402 may say of an instance's class
MSG_CACHE_ARG = ("functools.{deco} on {name} keeps every {param} it is called with ({why}) in a process-wide cache; "
                 "cache on small keys (names, shapes) instead, or keep the cache on the object")
MSG_RECURSIVE = ("nested function {name} refers to itself and captures {what}: function -> closure cell -> function "
                 "is a cycle, so what it captures waits for the collector; make it a module-level function and pass "
                 "what it needs")
MSG_REGISTRY = ("{obj} is registered in {where}, which lives as long as the program: it is never freed, not even "
                "by the collector; use weakref.WeakSet/WeakValueDictionary/WeakKeyDictionary or unregister it")
MSG_ATEXIT = ("atexit.register({what}) on every call of {fn}: the process-wide atexit list keeps {held} until the "
              "interpreter exits, one more entry per call; atexit.unregister it when done, or register once and "
              "track the live objects in a weakref.WeakSet")
MSG_CLASS = ("class {name} is created anew on every call of {fn}: a class always sits in a cycle and keeps what its "
             "methods close over until the collector runs; define it at module level")


def short_code(expr: cst.BaseExpression) -> str:
    """``expr`` as the source says it, cut to 40 characters for a message."""
    text = cst.Module(body=[]).code_for_node(expr)
    return text if len(text) <= 40 else text[:37] + "..."
