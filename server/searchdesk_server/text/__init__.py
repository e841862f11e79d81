"""Text from outside, made safe: cleaned (`cleaning`), shown to a person (`display`, `addresses`), with
credentials taken out (`redaction`), and mentioned in a sentence (`phrases`). Everything Google returns
and everything a caller passes is hostile; these modules are the only place it is made safe."""
