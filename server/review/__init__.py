"""A person in the loop (issue 22, docs/review.md): which validations this deployment decides
itself (`capabilities`), the review queue and its claims, the review and retake operations,
and the record of every decision."""
