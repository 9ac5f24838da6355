"""Native tests of the logic: `python -m unittest` (Python 3.10 or newer)."""

import unittest

from log_dedup import Options, dedup


class DedupTest(unittest.TestCase):
    def test_runs_differing_only_in_numbers_collapse_to_their_first_line(self):
        log = "\n".join(
            ["Compiling app"]
            + [f"Downloaded crate-{i} v1.{i}.0 ({i * 10} KB)" for i in range(40)]
            + ["Finished in 3.2s"]
        )
        text, removed = dedup(log)
        self.assertEqual(
            text,
            "Compiling app\nDownloaded crate-0 v1.0.0 (0 KB)\n[… 39 similar lines]\nFinished in 3.2s",
        )
        self.assertEqual(removed, 38)

    def test_short_runs_and_different_lines_are_kept(self):
        log = "a 1\na 2\nb\nc\n"
        self.assertEqual(dedup(log), (log, 0))

    def test_blank_runs_are_kept(self):
        log = "x\n\n\n\n\ny"
        self.assertEqual(dedup(log), (log, 0))

    def test_numbers_can_be_significant(self):
        log = "retry 1\nretry 2\nretry 3"
        self.assertEqual(dedup(log, Options(ignore_numbers=False)), (log, 0))
        self.assertEqual(dedup(log)[0], "retry 1\n[… 2 similar lines]")

    def test_config_is_validated(self):
        self.assertEqual(Options.from_config([("min_run", "5")]).min_run, 5)
        with self.assertRaisesRegex(ValueError, "min_run"):
            Options.from_config([("min_run", "1")])
        with self.assertRaisesRegex(ValueError, "ignore_numbers"):
            Options.from_config([("ignore_numbers", "maybe")])


if __name__ == "__main__":
    unittest.main()
