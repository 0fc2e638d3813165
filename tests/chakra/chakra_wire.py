"""Chakra rank files (<prefix>.<rank>.et) written and read by hand, with no protobuf module: the wire
format of proto/chakra/et_def.proto (Chakra's v1.0.0 layout), for the test scripts that must not go
through hetsim's own reader. Writing omits fields at their default value, as protobuf does."""

COMP, SEND, RECV, COLL = 4, 5, 6, 7


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vfield(field, n):
    return key(field, 0) + varint(n)


def bfield(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def attr(name, value):
    body = bfield(1, name)
    if isinstance(value, bool):
        body += vfield(27, int(value))  # bool_val
    elif isinstance(value, int):
        body += vfield(9, value)  # int64_val
    else:
        body += bfield(29, value)  # string_val
    return body


def node(id, type, deps=(), data_deps=(), dur=0, name=None, **attrs):
    """A Node message: `deps` are ctrl_deps, `attrs` its attributes in order."""
    body = (vfield(1, id) if id else b"") + bfield(2, f"n{id}" if name is None else name) + vfield(3, type)
    if deps:
        body += bfield(4, b"".join(varint(d) for d in deps))
    if data_deps:
        body += bfield(5, b"".join(varint(d) for d in data_deps))
    if dur:
        body += vfield(7, dur)
    for k, v in attrs.items():
        body += bfield(10, attr(k, v))
    return body


def stream(nodes, version="0.0.4"):
    """A rank file's bytes: GlobalMetadata(version), then the nodes, each after its varint size."""
    out = b""
    for m in [bfield(1, version)] + list(nodes):
        out += varint(len(m)) + m
    return out


# Reading.

def _read_varint(b, i):
    shift = result = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return result, i


def fields(b):
    """(field, wire type, value) of a message: ints for varints, bytes otherwise."""
    i, out = 0, []
    while i < len(b):
        k, i = _read_varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = _read_varint(b, i)
        elif w == 2:
            n, i = _read_varint(b, i)
            v = b[i:i + n]
            i += n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {w}")
        out.append((f, w, v))
    return out


def _ids(w, v):
    if w == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _read_varint(v, i)
        out.append(x)
    return out


# AttributeProto's value fields this reader decodes: int32, int64, uint32, uint64, bool, string.
_INT_FIELDS, _BOOL_FIELD, _STRING_FIELD = {7, 9, 11, 13}, 27, 29


def _attribute(b):
    name, value, kind = "", None, None
    for f, w, v in fields(b):
        if f == 1:
            name = v.decode()
        elif f in _INT_FIELDS and w == 0:
            value, kind = (v - (1 << 64) if v >= 1 << 63 else v), "int"
        elif f == _BOOL_FIELD:
            value, kind = bool(v), "bool"
        elif f == _STRING_FIELD:
            value, kind = v.decode(errors="replace"), "string"
        else:
            value, kind = v, f"field {f}"
    return name, value, kind


def read_rank(data):
    """(version, nodes) of a rank file's bytes; each node a dict: id, name, type, ctrl_deps, data_deps,
    duration_micros, attr {name: (value, kind)}. Raises ValueError on a broken stream."""
    messages, i = [], 0
    while i < len(data):
        n, i = _read_varint(data, i)
        if i + n > len(data):
            raise ValueError(f"message {len(messages)}: truncated")
        messages.append(data[i:i + n])
        i += n
    if not messages:
        raise ValueError("no GlobalMetadata")
    version = ""
    for f, w, v in fields(messages[0]):
        if f == 1:
            version = v.decode()
    nodes = []
    for m in messages[1:]:
        n = {"id": 0, "name": "", "type": 0, "ctrl_deps": [], "data_deps": [], "duration_micros": 0, "attr": {}}
        for f, w, v in fields(m):
            if f == 1:
                n["id"] = v
            elif f == 2:
                n["name"] = v.decode(errors="replace")
            elif f == 3:
                n["type"] = v
            elif f == 4:
                n["ctrl_deps"] += _ids(w, v)
            elif f == 5:
                n["data_deps"] += _ids(w, v)
            elif f == 7:
                n["duration_micros"] = v
            elif f == 10:
                name, value, kind = _attribute(v)
                n["attr"].setdefault(name, (value, kind))
        nodes.append(n)
    return version, nodes
