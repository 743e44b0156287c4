"""A creator's message, parsed once when it arrives and carried with the request (router, planner, tools).

`parse(text)` reads everything the layers above ask of a message — its language, intent (act, media, subject…),
the file names it mentions, the piece it points at ("the second", 第二张, "that one") — and returns a
`Parsed`. The runtime builds one per message on arrival (`Runtime.send`) and hands it along with the
message (`Carried`, keyed by the message's id and its words: a clarify card's answer delivers the same
words under an id of its own); nothing downstream parses the same words again.
`PARSES` counts parses (what the tests count).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

from .intent import Intent, read
from .reference import Reference, find_reference
from .text import normalise

PARSES = 0  # messages parsed in this process (what the tests count)


@dataclass(frozen=True)
class Parsed:
    text: str
    language: str
    reading: Intent  # never mutated: `intent()` gives a caller its own copy
    files: tuple[str, ...]  # file names as the message has them ("海报_1.png", "posters/jazz_1.png")
    reference: Reference | None  # the piece(s) it points at, by position or reference
    norm: str  # normalised text (NFKC, case-folded)

    def intent(self) -> Intent:
        """A copy of the reading, for a caller to adjust (the router re-reads the act, the planner the files)."""
        it = self.reading
        return replace(it, style=list(it.style), files=list(it.files), extra_media=list(it.extra_media),
                       nodes=list(it.nodes), constraints=list(it.constraints))


def parse(text: str) -> Parsed:
    """Parse TEXT (one message, or several joined) once."""
    global PARSES
    PARSES += 1
    it = read(text)
    reference = find_reference(text, it.language)
    _pointed(it, reference, text)
    return Parsed(text=text, language=it.language, reading=it, files=tuple(it.files), reference=reference,
                  norm=normalise(text))


def _pointed(it: Intent, reference: Reference | None, text: str) -> None:
    """A message that points at a piece of a series changes that piece: "lose the text on the second one",
    "give the third one a sunset", "first one bigger text pls" read as a request (or nothing) on their words
    alone; "его сделай чёрно-белым" names the piece before its verb. ("a second poster" points at nothing:
    reference.find_reference.)"""
    if reference is None or it.files:
        return
    if reference.kind != "recent" and it.act in ("one_shot", "other"):
        it.act = "revise"
    elif reference.kind == "recent" and it.act == "one_shot" and 0 <= reference.at and not text[:reference.at].strip():
        it.act = "revise"


def of(message: str | Parsed) -> Parsed:
    """MESSAGE as parsed (a Parsed passes through; plain words are parsed now)."""
    return message if isinstance(message, Parsed) else parse(message)


class Carried:
    """Parsed messages the runtime carries from arrival to the steps that read them, by message id and by
    their words: the router hands a task the creator's words verbatim under a message id of its own (a
    clarify card's answer, `runtime.reactions.deliver_choice`), and that delivery finds the parse made on
    arrival. The oldest are let go past LIMIT (a message read in another process is parsed there, once)."""

    LIMIT = 512

    def __init__(self) -> None:
        self._by_id: OrderedDict[str, Parsed] = OrderedDict()
        self._by_text: OrderedDict[str, Parsed] = OrderedDict()

    def keep(self, message_id: str, parsed: Parsed) -> Parsed:
        for table, key in ((self._by_id, message_id), (self._by_text, parsed.text)):
            table[key] = parsed
            table.move_to_end(key)
            while len(table) > self.LIMIT:
                table.popitem(last=False)
        return parsed

    def get(self, message_id: str, text: str) -> Parsed:
        """The message MESSAGE_ID (whose words are TEXT) as parsed on arrival — or the same words carried
        under another id (a parse depends on the words alone) — or parsed now if it came from elsewhere."""
        found = self._by_id.get(message_id)
        if found is None or found.text != text:
            found = self._by_text.get(text)
        return self.keep(message_id, found if found is not None else parse(text))

    def joined(self, messages: list[tuple[str, str]]) -> Parsed | None:
        """The one Parsed for MESSAGES [(id, text)] read together: the carried one for a single message, a
        parse of the joined words for several; None for none."""
        if not messages:
            return None
        if len(messages) == 1:
            return self.get(*messages[0])
        return parse(" ".join(t for _, t in messages))
