"""English words of the reader's rules (see the package docstring for how entries match)."""

BOTH = ("both",)
SAME = ("same",)
PAIR = ("both", "same", "either")  # a question about two things at once
THAN = ("than", "before", "after")
EARLIER = ("older", "oldest", "earlier", "earliest", "first", "sooner", "before", "prior to")
LATER = ("younger", "youngest", "later", "latest", "newer", "newest", "more recent", "most recent", "after")
MONTHS = (("january",), ("february",), ("march",), ("april",), ("may",), ("june",), ("july",), ("august",),
          ("september",), ("october",), ("november",), ("december",))  # a date's month, in order
WHEN = "When was {}?"  # the question that asks when an event (a compared option) happened
MORE = ("longer", "longest", "taller", "tallest", "larger", "largest", "bigger", "biggest", "higher", "highest",
        "heavier", "wider", "deeper", "more", "most", "over", "exceed", "exceeds", "pricier", "dearer")
LESS = ("shorter", "shortest", "smaller", "smallest", "lower", "lowest", "lighter", "narrower", "less", "fewer",
        "under", "cheaper")
# the attribute a comparative compares: (the question's cue words, the words a page states it with)
ATTRIBUTES = {
    "length": (("longer", "longest", "shorter", "shortest"), ("long", "length")),
    "height": (("taller", "tallest", "higher", "highest", "lower", "lowest"),
               ("tall", "high", "height", "elevation", "altitude")),
    "size": (("larger", "largest", "bigger", "biggest", "smaller", "smallest"),
             ("large", "big", "area", "size", "population")),
    "depth": (("deeper", "deepest"), ("deep", "depth")),
    "width": (("wider", "widest", "narrower"), ("wide", "width")),
    "weight": (("heavier", "heaviest", "lighter"), ("heavy", "weight")),
    "age": (("older", "oldest", "younger", "youngest"), ("born", "birth")),
    "population": (("inhabitants", "residents", "people", "populous", "population"),
                   ("population", "inhabitants", "residents", "people")),
    "price": (("cost", "costs", "expensive", "cheaper", "pricier", "price"),
              ("price", "priced", "cost", "costs", "sells")),
}
# units a size is written in, to one measure each; areas before lengths ("km²" is no "km")
UNITS = (
    (("km²-", "km2", "sq km", "sq. km", "sq.km", "sqkm", "square kilomet-"), 1e6),
    (("km", "kilomet-"), 1e3),
    (("mi", "mile", "miles"), 1609.344),
    (("ft", "feet", "foot"), 0.3048),
    (("m", "metre", "metres", "meter", "meters"), 1.0),
    (("kg", "kilogram-"), 1.0),
    (("ton", "tons", "tonne", "tonnes"), 1e3),
)
