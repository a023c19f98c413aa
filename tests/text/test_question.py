"""Reading a question (text/question.py): function words, names the home knows, time phrases, "when", in English and Japanese."""

from __future__ import annotations

from datetime import date

from cuemem.text.question import Vocabulary, content_words, inflected, read_question, when_query

TODAY = date(2023, 6, 1)
PEOPLE = Vocabulary({"actor": ["Caroline", "Melanie", "acme-corp", "田中"], "tag": ["pottery", "a"], "type": ["note"]}, years=["2022", "2023"])


def test_function_and_question_words_leave_the_query() -> None:
    """What is left is the topic."""
    assert content_words("What did she paint about the lake?") == "paint lake"
    assert read_question("Where does he live?", now=TODAY, vocabulary=None).query == "live"


def test_named_actors_are_found_without_case_and_leave_the_query() -> None:
    """A speaker's name (possessive too) becomes a named actor and leaves the BM25 query."""
    q = read_question("What is Caroline's favourite pottery style?", now=TODAY, vocabulary=PEOPLE)
    assert q.named == {"actor": ["Caroline"], "tag": ["pottery"]}
    assert q.query == "favourite pottery style"  # a tag is boosted and kept


def test_multi_word_values_match_runs_of_words() -> None:
    """``acme-corp`` is named by "Acme Corp"; a one-letter value or a function word names nothing."""
    q = read_question("What did Acme Corp sign a deal for?", now=TODAY, vocabulary=PEOPLE)
    assert q.named == {"actor": ["acme-corp"]} and "Acme" not in q.query


def test_time_phrases_become_buckets_and_leave_the_query() -> None:
    """"in May 2023" names the month; "last week" the days of the previous week."""
    q = read_question("What did Melanie paint in May 2023?", now=TODAY, vocabulary=PEOPLE)
    assert q.buckets == ("2023-05",) and q.query == "paint"
    assert len(read_question("What happened last week?", now=TODAY, vocabulary=None).buckets) == 7


def test_when_questions_are_recognised() -> None:
    """"when", "what year", "how long", いつ, 何年 ask when; "what" alone does not."""
    for text in ["When did she move?", "What year was it?", "How long has he painted?", "いつ引っ越しましたか", "何年に始めた？"]:
        assert read_question(text, now=TODAY, vocabulary=None).asks_when, text
    assert not read_question("What did she paint?", now=TODAY, vocabulary=None).asks_when


def test_japanese_question_words_and_names() -> None:
    """何, ですか and the like leave the query; a Japanese actor is found as a substring."""
    q = read_question("田中さんは何を買いましたか", now=TODAY, vocabulary=PEOPLE)
    assert q.named == {"actor": ["田中"]}
    assert "何" not in q.query and "ましたか" not in q.query and "買い" in q.query


def test_nothing_left_falls_back_to_the_question() -> None:
    """A question of only names and function words is searched as asked."""
    q = read_question("What about Caroline?", now=TODAY, vocabulary=PEOPLE)
    assert q.query == "What about Caroline?" and q.named == {"actor": ["Caroline"]}


def test_every_step_can_be_switched_off() -> None:
    """With every step off the query is the question as asked."""
    text = "When did Caroline paint in May 2023?"
    q = read_question(text, now=TODAY, vocabulary=PEOPLE, function_words=False, names=False, time=False)
    assert (q.query, q.named, q.buckets) == (text, {}, ())


def test_the_when_query_holds_time_words_and_the_home_years() -> None:
    """Memories that say when are those holding a time word or one of the home's years."""
    words = when_query(PEOPLE).split()
    assert {"yesterday", "weekend", "june", "先週", "2022", "2023"} <= set(words)


def test_japanese_words_that_merely_start_like_question_words_stay() -> None:
    """どうぶつえん, なんば and いつも keep their characters; いつも does not ask when."""
    for text in ["どうぶつえんに行った", "なんばで会った", "いつも走る"]:
        q = read_question(text, now=TODAY, vocabulary=None)
        assert q.query == text.replace("、", " ") and not q.asks_when, text


def test_the_longest_overlapping_name_wins() -> None:
    """A question naming 田中太郎 names him, not also 田中; a CJK name is cut from the text as written."""
    v = Vocabulary({"actor": ["田中", "田中太郎"]})
    q = read_question("田中太郎は何を買った", now=TODAY, vocabulary=v)
    assert q.named == {"actor": ["田中太郎"]} and "田中" not in q.query
    assert read_question("ßßßß田中 went home", now=TODAY, vocabulary=v).query == "ßßßß went home"


def test_a_when_question_may_open_with_a_conjunction() -> None:
    """"And when ...", "Which year ..." ask when; "what did she do when sad" does not."""
    assert read_question("And when did Bob call?", now=TODAY, vocabulary=None).asks_when
    assert read_question("Which year did it open?", now=TODAY, vocabulary=None).asks_when
    assert not read_question("What did she do when she was sad?", now=TODAY, vocabulary=None).asks_when


def test_a_value_no_live_memory_carries_is_not_a_name() -> None:
    """With ``live`` saying a value is gone, the word stays in the query and nothing is named."""
    q = read_question("What did Caroline paint?", now=TODAY, vocabulary=PEOPLE, live=lambda d, v: v != "Caroline")
    assert q.named == {} and "Caroline" in q.query


def test_many_japanese_values_are_all_found() -> None:
    """Of twenty thousand CJK values, the one a question names is found (values learnt one by one)."""
    v = Vocabulary({"actor": [f"山田{chr(0x4E00 + i)}{chr(0x4E00 + i // 7)}" for i in range(20_000)]})
    v.add("actor", "佐藤花子")
    assert len(v) == 20_001
    assert read_question("佐藤花子は何を買った", now=TODAY, vocabulary=v).named == {"actor": ["佐藤花子"]}


def test_a_given_name_many_people_share_names_each_of_them_once_in_the_order_learnt() -> None:
    """Twenty thousand people called Jonas, learnt one by one and some twice: "Jonas" names each once, first learnt first."""
    people = [f"Jonas Surname{i:05d}" for i in range(20_000)]
    v = Vocabulary({"actor": people})
    for name in people[:100]:
        v.add("actor", name)
    assert len(v) == 20_000
    assert read_question("What did Jonas say?", now=TODAY, vocabulary=v).named == {"actor": people}
    assert read_question("Did Surname00042 call?", now=TODAY, vocabulary=v).named == {"actor": [people[42]]}


def test_a_word_of_a_person_s_name_names_the_person_and_stays_in_the_query() -> None:
    """A given name in any case, a family name only with its capital; the word stays for BM25 (it may be an ordinary word)."""
    v = Vocabulary({"actor": ["priya shah", "kestrel air"]})
    q = read_question("When is priya back?", now=TODAY, vocabulary=v)
    assert q.named == {"actor": ["priya shah"]} and "priya" in q.query
    assert read_question("Did Shah call?", now=TODAY, vocabulary=v).named == {"actor": ["priya shah"]}
    assert read_question("the air is dry", now=TODAY, vocabulary=v).named == {}
    assert read_question("Is Air late?", now=TODAY, vocabulary=v).named == {"actor": ["kestrel air"]}
    assert read_question("Priya Shah's plan", now=TODAY, vocabulary=v).query == "plan"  # the whole name still leaves


def test_verbs_of_saying_give_way_to_the_topic() -> None:
    """"say"/"said"/"told" leave the query when a topic word is left, and stay when they are all there is."""
    assert content_words("what did Priya say about the discount?") == "Priya discount"
    assert content_words("What was said?") == "said"
    assert read_question("what did she tell you about the budget", now=TODAY, vocabulary=None).query == "budget"


def test_irregular_forms_join_their_family_but_light_verbs_do_not() -> None:
    """"broke" brings "break" and "broken"; "children" brings "child"; "taken" and "made" bring nothing."""
    assert inflected("what did the cat break") == "what did the cat break broke broken"
    assert inflected("children") == "children child"
    assert inflected("taken made") == "taken made"
    assert read_question("who won the match", now=TODAY, vocabulary=None).query == "won match win"
    assert read_question("who won the match", now=TODAY, vocabulary=None, function_words=False).query == "who won the match"


def test_a_pronoun_without_a_name_refers_back() -> None:
    """"she"/"it" with no name refers to the question before; a named person, or no pronoun, does not."""
    assert read_question("what did she say next?", now=TODAY, vocabulary=PEOPLE).refers
    assert read_question("what did it break?", now=TODAY, vocabulary=None).refers
    assert not read_question("what did Caroline say about her dog?", now=TODAY, vocabulary=PEOPLE).refers
    assert not read_question("what was painted?", now=TODAY, vocabulary=PEOPLE).refers
