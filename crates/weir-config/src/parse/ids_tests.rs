use super::number;

#[test]
fn unnumbered_items_take_the_first_free_id_past_their_position() {
    // Measured on haproxy 2.6: servers s1, s2 (id 1), s3 get 2, 1, 4.
    assert_eq!(number([None, Some(1), None].into_iter()), vec![2, 1, 4]);
    // Backends a (id 2), c, d then a listen: 2, 3, 4, 5.
    assert_eq!(
        number([Some(2), None, None, None].into_iter()),
        vec![2, 3, 4, 5]
    );
    // The stats socket's proxy first, then a, b (id 3), c, d, f: 1..6.
    assert_eq!(
        number([None, None, Some(3), None, None, None].into_iter()),
        vec![1, 2, 3, 4, 5, 6]
    );
    assert_eq!(number([None, None].into_iter()), vec![1, 2]);
}

#[test]
fn a_later_written_id_is_not_given_to_an_earlier_item() {
    assert_eq!(number([None, Some(1)].into_iter()), vec![2, 1]);
    assert_eq!(number([None, None, Some(2)].into_iter()), vec![1, 3, 2]);
}
