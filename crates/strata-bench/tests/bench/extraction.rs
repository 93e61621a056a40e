//! The extraction training set: every reply to learn reads as extraction reads it, cites turns
//! that say what it extracts, and no subject of it is named in the update set it is measured on.

use strata_bench::extracttrain;

#[test]
fn the_extraction_training_set_reads_as_the_product_reads_and_shares_no_name_with_the_update_set() {
    let set = extracttrain::read_set(&extracttrain::data_file()).unwrap();
    assert!(set.extract.len() >= 150 && set.merge.len() >= 50, "{} / {}", set.extract.len(), set.merge.len());
    let updates = std::fs::read_to_string(strata_bench::extractbench::updates_file()).unwrap();
    let (mut facts, mut empty) = (0, 0);
    for c in &set.extract {
        let reply: serde_json::Value = serde_json::from_str(&c.answer).unwrap();
        let subjects = reply["subjects"].as_array().unwrap();
        empty += usize::from(subjects.is_empty());
        for s in subjects {
            let name = s["name"].as_str().unwrap();
            if name != "user" {
                assert!(!updates.contains(name), "{}: '{name}' is in the update set", c.id);
            }
            for f in s["facts"].as_array().unwrap() {
                facts += 1;
                // The cited turn names the subject (or is the subject speaking, or the user).
                let turn = &c.turns[f["turns"][0].as_u64().unwrap() as usize - 1];
                let said = format!("{}: {}", turn.speaker, turn.text);
                assert!(
                    name == "user" || said.contains(name) || said.contains("He ") || said.contains("She "),
                    "{}: {said}",
                    c.id
                );
            }
        }
    }
    assert!(facts >= set.extract.len() && empty >= 10, "{facts} facts, {empty} conversations with none");
    // The merge questions teach all three decisions.
    let answers: String = set.merge.iter().map(|m| m.answer.as_str()).collect();
    for action in ["\"add\"", "\"update\"", "\"noop\""] {
        assert!(answers.matches(action).count() >= 10, "too few {action} decisions");
    }
    // The prompts are the product's: the extraction rules, then the numbered turns.
    let prompt = extracttrain::conversation_prompt(&set.extract[0]);
    assert!(prompt[0].content.contains("You extract facts worth remembering"));
    assert!(prompt[1].content.starts_with("[1] "));
}
