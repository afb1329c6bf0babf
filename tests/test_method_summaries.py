"""What the class table says each method does with its arguments (``classtable.method_summaries``): the
summary behind CYC202 for ``self.x.method(self)``, read off CPython's tree for every file."""
import ast
import textwrap

import pytest

from cyclelint.classtable import method_summaries

pytestmark = pytest.mark.lintpath


def summary(body: str):
    tree = ast.parse(textwrap.dedent(body))
    return method_summaries(tree.body[0])


@pytest.mark.parametrize(("source", "kept"), [
    ("def add(self, item):\n    self.item = item", ["item"]),
    ("def add(self, item):\n    self.items.append(item)", ["item"]),
    ("def add(self, key, item):\n    self.table[key] = item", ["item"]),
    ('def add(self, item):\n    setattr(self, "item", item)', ["item"]),
    ("def add(self, item):\n    if item is not None:\n        self.item = item", ["item"]),
    ("def add(self, a, b):\n    self.pair = (a, b)", ["a", "b"]),
    # what it keeps is not the argument: a weak reference, a derived value, an attribute of it
    ("def add(self, item):\n    self.ref = weakref.ref(item)", []),
    ("def add(self, item):\n    self.n = len(item)", []),
    ("def add(self, item):\n    self.data = item.data", []),
    ("def add(self, item):\n    other.item = item", []),
    # a closure defined here stores when it runs, which this summary does not follow
    ("def add(self, item):\n    def later():\n        self.item = item\n    return later", []),
])
def test_what_a_method_keeps(source, kept):
    methods, keeps, *_ = summary("class C:\n" + textwrap.indent(source, "    "))
    assert methods == ["add"]
    assert (keeps["add"].kept if "add" in keeps else []) == kept


def test_static_and_class_methods_and_properties_are_no_methods_of_an_instance():
    methods, keeps, *_ = summary("""\
        class C:
            def __init__(self, x):
                self.x = x

            @staticmethod
            def make(x):
                return x

            @classmethod
            def register(cls, x):
                cls.x = x

            @property
            def size(self):
                return 1

            def keep(self, x, *, y):
                self.y = y
        """)
    assert methods == ["keep"]
    assert keeps["keep"].params == ["x", "y"] and keeps["keep"].kept == ["y"]


@pytest.mark.parametrize(("setter", "kept"), [
    ("self._refs = [weakref.ref(v) for v in values]", []),  # accelerate 1.4.0's GradientState
    ("self._refs = values", ["item"]),
])
def test_a_store_through_a_property_keeps_what_its_setter_keeps(setter, kept):
    _, keeps, *_ = summary(f"""\
        class C:
            def add(self, item):
                self.refs += [item]

            @property
            def refs(self):
                return [r() for r in self._refs]

            @refs.setter
            def refs(self, values):
                {setter}
        """)
    assert (keeps["add"].kept if "add" in keeps else []) == kept


@pytest.mark.parametrize(("source", "dropped"), [
    # only a string of it, or a plain answer about it (read for methods named like a registration only)
    ("def register_hook(self, hook):\n    self.names.append(hook.__name__)", {"hook": []}),
    ("def register_hook(self, hook):\n    if not callable(hook):\n        raise TypeError(hook.__qualname__)", {"hook": []}),
    # handed to a method of an object every store of ``self.registry`` builds: the project judges that one
    ("def __init__(self):\n    self.registry = Registry()\n"
     "def register_hook(self, hook):\n    self.registry.register_hook(hook)", {"hook": [("Registry", "register_hook", 0)]}),
    ("def __init__(self):\n    self.registry = Registry()\n"
     "def register_hook(self, hook):\n    self.registry.register_hook(fn=hook)", {"hook": [("Registry", "register_hook", "fn")]}),
    # any other use may keep it
    ("def register_hook(self, hook):\n    self.hooks.append(hook)", {}),
    ("def register_hook(self, hook):\n    return hook", {}),
    ("def register_hook(self, hook):\n    hook()", {}),
    ("def register_hook(self, hook):\n    register(hook)", {}),
    ("def register_hook(self, hook):\n    self.owner = hook.__self__", {}),
    ("def register_hook(self, hook):\n    self.later = lambda: hook.__name__", {}),
    ("def __init__(self, registry):\n    self.registry = Registry() if registry is None else registry\n"
     "def register_hook(self, hook):\n    self.registry.register_hook(hook)", {}),
    ("def __init__(self):\n    self.registry = Registry()\n"
     "def register_hook(self, hook):\n    self.registry.register_hook(*extra, hook)", {}),  # its position unknown
    ("def __init__(self):\n    self.registry = Registry()\n"
     "def swap(self, other):\n    self.registry = other\n"
     "def register_hook(self, hook):\n    self.registry.register_hook(hook)", {}),
])
def test_what_a_method_keeps_nothing_of(source, dropped):
    drops = summary("class C:\n" + textwrap.indent(source, "    ")).drops
    assert (drops["register_hook"].dropped if "register_hook" in drops else {}) == dropped


def test_only_a_method_named_like_a_hook_registration_is_read():
    drops = summary("""\
        class C:
            def register_forward_hook(self, hook):
                self.names.append(hook.__name__)

            def add(self, hook):
                self.names.append(hook.__name__)
        """).drops
    assert list(drops) == ["register_forward_hook"]


def test_static_and_class_methods_are_unbound():
    assert summary("""\
        class C:
            @staticmethod
            def hook(module, keys):
                pass

            @classmethod
            def make(cls):
                pass

            def __new__(cls):
                pass

            def method(self):
                pass
        """).unbound == ["__new__", "hook", "make"]


@pytest.mark.parametrize(("call", "kept", "hands"), [
    ("self.storage.update(strategy)", [], {"strategy": [("Reservoir", "update", 0)]}),
    ("self.storage.update(strategy=strategy)", [], {"strategy": [("Reservoir", "update", "strategy")]}),
    ("self.storage.update((strategy, 1))", ["strategy"], {}),  # inside another value: stored as dict.update would
    ("self.storage.update(*extra, strategy)", ["strategy"], {}),
    ("self.other.update(strategy)", ["strategy"], {}),  # an attribute of no known class
])
def test_what_a_method_hands_to_an_object_of_another_files_class(call, kept, hands):
    """``self.storage = Reservoir()``, ``Reservoir`` imported: the method keeps the argument as that class says."""
    _, keeps, *_ = summary(f"""\
        class C:
            def __init__(self):
                self.storage = Reservoir()

            def add(self, strategy):
                {call}
        """)
    assert (keeps["add"].kept, keeps["add"].hands) == (kept, hands)

