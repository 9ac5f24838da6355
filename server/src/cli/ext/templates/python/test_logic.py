import unittest

from logic import trim_lines


class TrimLinesTest(unittest.TestCase):
    def test_trailing_whitespace_goes_and_is_counted(self):
        self.assertEqual(
            trim_lines("error: x   \nwarning: y\t\nok\n"),
            ("error: x\nwarning: y\nok\n", 2),
        )


if __name__ == "__main__":
    unittest.main()
