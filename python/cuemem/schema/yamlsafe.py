"""Bounded YAML: the one way cuemem parses YAML a person wrote (note front matter, ``golden.yaml``).

``safe_load`` resolves aliases, so a few hundred bytes of nested aliases expand to
gigabytes: cuemem's YAML never needs an anchor, so any anchor or alias is refused
(checked on the parser's events, before anything is built). libyaml's safe loader is
used when PyYAML was built with it (same safety, several times faster). PyYAML is imported
by the first parse: a process that reads no YAML does not load it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["YamlRefused", "load_bounded"]


class YamlRefused(ValueError):
    """YAML that is too large, uses an anchor or alias, or does not parse; the message says which."""


def load_bounded(text: str, limit: int, what: str) -> Any:
    """The YAML document ``text``, refused when it is larger than ``limit`` characters or
    uses an anchor or alias; ``what`` names it in messages ("front matter").

    Raises:
        YamlRefused: too large, anchors or aliases, invalid YAML, too deep, or an
            impossible date or number.
    """
    if len(text) > limit:
        raise YamlRefused(f"{what} is larger than {limit} bytes")
    import yaml  # type: ignore[import-untyped, unused-ignore]

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if "&" in text or "*" in text:  # only then can there be an anchor or an alias
            for event in yaml.parse(text, Loader=loader):
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                    raise YamlRefused(f"{what} uses a YAML anchor or alias; its fields are plain values")
        return yaml.load(text, Loader=loader)
    except YamlRefused:
        raise
    except yaml.YAMLError as exc:
        raise YamlRefused(f"{what} is not valid YAML: {exc}") from None
    except RecursionError:
        raise YamlRefused(f"{what} is nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a YAML timestamp that is no date
        raise YamlRefused(f"{what} holds an impossible date or number: {exc}") from None
