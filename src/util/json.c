/* PLACEHOLDER: being written (JSON reader for the tuning file). */
