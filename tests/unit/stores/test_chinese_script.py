"""Traditional Chinese folded to simplified with every offset kept, and messages turned back into traditional."""

from __future__ import annotations

import stores.chinese_script as chinese_script
from prompts.languages import abstention
from stores.chinese_script import is_traditional, script_language, simplified, traditional


def test_traditional_text_folds_to_simplified_with_the_same_length():
    question = "誰在半決賽中輸給了白鴿隊？"
    assert simplified(question) == "谁在半决赛中输给了白鸽队？"
    assert len(simplified(question)) == len(question)
    assert simplified("谁在半决赛中输给了白鸽队？") == "谁在半决赛中输给了白鸽队？"  # simplified stays as it is
    assert simplified("Who lost? Кто проиграл?") == "Who lost? Кто проиграл?"


def test_the_script_of_a_question_is_told_and_a_message_can_follow_it():
    assert is_traditional("這家工廠於何時被賣給了鋼鐵公司?")
    assert not is_traditional("这家工厂于何时被卖给了钢铁公司?")
    assert not is_traditional("When was the factory sold?")
    assert traditional("现有资料中没有足够的信息") == "現有資料中沒有足夠的信息"
    assert script_language("zh", "這家工廠的廠長是誰?") == "zh-Hant"
    assert script_language("zh", "这家工厂的厂长是谁?") == script_language("zh", "") == "zh"
    assert script_language("en", "Who?") == "en"
    assert abstention("zh-Hant") == traditional(abstention("zh"))  # the written message is the converted one


def test_a_conversion_that_would_change_the_length_falls_back_to_one_character_at_a_time(monkeypatch):
    class Lengthening:
        """A converter whose phrase conversion adds a character (as a phrase table entry could)."""

        def convert(self, text: str) -> str:
            return text.replace("後", "后") + ("!" if len(text) > 1 else "")

    monkeypatch.setattr(chinese_script, "_converter", lambda config: Lengthening())
    assert simplified("後來") == "后來"
