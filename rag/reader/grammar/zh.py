"""Chinese words of the reader's rules, in simplified characters (found anywhere in a text)."""

BOTH = ("都", "均")
SAME = ("同一", "相同", "一样")
PAIR = ("都", "同一")
THAN = ("比", "早于", "晚于", "高于", "长于", "大于", "多于", "少于", "低于", "短于", "小于")
WH = ("哪", "什么", "谁", "几", "多少", "怎么", "为什么", "何")  # a question word: no yes / no question
EARLIER = ("更早", "最早", "早于", "之前", "以前", "年纪更大", "年龄更大", "更年长", "年长",
           "哪个先", "哪一个先", "谁先")
LATER = ("更晚", "最晚", "晚于", "之后", "以后")
MONTHS = tuple((f"{n}月", f"{c}月") for n, c in enumerate("一二三四五六七八九", start=1)) + (
    ("10月", "十月"), ("11月", "十一月"), ("12月", "十二月"))  # "1月" inside "11月": the longest entry wins
WHEN = "{}是什么时候？"
MORE = ("更长", "更高", "更大", "超过", "多于", "高于", "长于", "大于", "更多", "更贵")
LESS = ("更短", "更低", "更小", "少于", "低于", "短于", "小于", "不到", "更少", "更便宜")
# "A 比 B 早": what follows "比" (than) within a few characters says which way the comparison goes
THAN_EARLIER = ("早", "老")
THAN_LATER = ("晚", "年轻")
THAN_MORE = ("长", "高", "大", "多", "贵", "重", "深", "宽")
THAN_LESS = ("短", "低", "小", "少", "便宜", "轻", "浅", "窄")
NOT_THAN = "赛例分率喻如利"  # 比赛 (a match), 比例 (a ratio) ...: "比" that is no "than"
ATTRIBUTES = {
    "length": (("更长", "更短"), ("长", "全长", "长度")),
    "height": (("更高", "更低"), ("高", "高度", "海拔")),
    "size": (("更大", "更小"), ("面积", "人口")),
    "depth": (("更深",), ("深", "深度")),
    "width": (("更宽",), ("宽", "宽度")),
    "weight": (("更重",), ("重", "重量")),
    "age": (("年长", "年轻", "年纪"), ("出生", "生于")),
    "population": (("人口", "居民"), ("人口", "居民")),
    "price": (("贵", "便宜", "价"), ("价格", "售价", "定价", "元")),
}
UNITS = (
    (("平方公里", "平方千米"), 1e6),
    (("公里", "千米"), 1e3),
    (("米",), 1.0),
    (("里",), 500.0),
)


def than_spans(text: str, ends: tuple[str, ...], within: int = 24) -> list[tuple[int, int]]:
    """Where "比 ... <end>" stands: "比" (not 比赛, 比例 ...), at least one character, then one of `ends` within
    `within` characters."""
    spans = []
    at = text.find("比")
    while at >= 0:
        if at + 1 < len(text) and text[at + 1] not in NOT_THAN:
            window = text[at + 2 : at + 2 + within]
            hits = [i for end in ends if (i := window.find(end)) >= 0]
            if hits:
                first = min(hits)
                length = max(len(e) for e in ends if window.startswith(e, first))
                spans.append((at, at + 2 + first + length))
        at = text.find("比", at + 1)
    return spans
