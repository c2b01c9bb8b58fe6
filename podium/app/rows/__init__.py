"""A table's rows as Browse and Review show and change them, shared by both pages:
the view and its URL, a row's turns, labels and review filters, saves, history, snapshot
picks, and the row panels both pages draw."""
