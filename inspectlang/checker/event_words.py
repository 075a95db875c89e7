"""Which of two dates comes first, as their names tell (`W018`, issue 33): a small lexicon of
event words in the three locales the product speaks (en_US, es_AR, pt_BR).

`days_between(a, b)` is `b - a`: the earlier date goes first. Nothing a template declares says
which of two free dates is the earlier, but their names often do: a parcel is `promised` before
it is `delivered`, a policy `starts` before its `claim`. A call whose first date is named for an
event that ends a span (delivered, returned, expiry...) and whose second is named for one that
starts it (promised, ordered, purchase, birth...) counts backwards, and is reported as a
warning: names are the author's words, not a proof. A template that means to count back writes
`-days_between(promised, delivered)`, the same number with the order said, and is not reported.

A date is given a role only when every word that matches agrees: a name or label with words of
both kinds (`order_delivered`) has none. Words are compared folded (lower case, accents off),
each word of a name split at `_` and of a label at anything not a letter. A word ending in `*`
is a stem (`deliver*`: delivered, delivery); the others must match whole (`end`, not `endorse`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

#: Events a span of time starts from (the first date of a `*_between`).
STARTS: frozenset[str] = frozenset(
    {
        # en_US
        "promis*",
        "due",
        "deadline",
        "order*",
        "issu*",
        "start*",
        "begin*",
        "birth*",
        "born",
        "purchas*",
        "bought",
        "book*",
        "signed",
        "signing",
        "hired",
        "rented",
        "leased",
        "depart*",
        "ship*",
        "sent",
        "inception",
        # es_AR
        "prometid*",
        "promesa",
        "pedid*",
        "emision",
        "emitid*",
        "inicio",
        "comienzo",
        "nacimiento",
        "compra",
        "comprad*",
        "reserva*",
        "firma",
        "contratacion",
        "envio",
        "enviad*",
        "salida",
        # pt_BR (with the es_AR stems above: prometid*, pedid*, compra, reserva*, emitid*...)
        "promessa",
        "prazo",
        "emissao",
        "comeco",
        "nascimento",
        "assinatura",
        "contratacao",
    }
)
#: Events a span of time ends with (the second date of a `*_between`).
ENDS: frozenset[str] = frozenset(
    {
        # en_US
        "deliver*",
        "return*",
        "end",
        "ended",
        "ending",
        "expir*",
        "finish*",
        "completed",
        "completion",
        "closed",
        "closing",
        "receiv*",
        "receipt",
        "arriv*",
        "paid",
        "payment",
        "death",
        "cancel*",
        "claim*",
        "accident",
        "incident",
        # es_AR
        "entreg*",
        "devolucion",
        "devuelt*",
        "fin",
        "finalizacion",
        "expiracion",
        "caducidad",
        "cierre",
        "recepcion",
        "recibid*",
        "llegada",
        "pago",
        "siniestro",
        "reclamo",
        # pt_BR (with the es_AR stems above: entreg*, ...)
        "devolucao",
        "devolvid*",
        "fim",
        "termino",
        "expiracao",
        "validade",
        "encerramento",
        "recebimento",
        "recebid*",
        "chegada",
        "pagamento",
        "sinistro",
    }
)

_WORD = re.compile(r"[a-z]+")


def _fold(text: str) -> str:
    """Lower case with the accents off (`emisión` -> `emision`, `começo` -> `comeco`)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _matches(word: str, lexicon: frozenset[str]) -> bool:
    return word in lexicon or any(
        entry.endswith("*") and word.startswith(entry[:-1]) for entry in lexicon
    )


def date_role(texts: Iterable[str]) -> str | None:
    """`"start"` or `"end"` when the words of a date's name and labels name only events of that
    kind, else None (no such word, or words of both kinds)."""
    roles: set[str] = set()
    for text in texts:
        for word in _WORD.findall(_fold(text)):
            if _matches(word, STARTS):
                roles.add("start")
            if _matches(word, ENDS):
                roles.add("end")
    return roles.pop() if len(roles) == 1 else None
